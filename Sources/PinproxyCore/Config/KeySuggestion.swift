/// "Did you mean" for misspelt configuration keys: the closest allowed key by
/// Levenshtein distance, when it is close enough to be a plausible typo.
enum KeySuggestion {
    /// The allowed key nearest to `key`, if within max(2, len/3) edits.
    static func closest(to key: String, among allowed: [String]) -> String? {
        let threshold = max(2, key.count / 3)
        var best: (key: String, distance: Int)?
        for candidate in allowed {
            let distance = editDistance(key.lowercased(), candidate)
            if distance <= threshold, distance < (best?.distance ?? Int.max) { best = (candidate, distance) }
        }
        return best?.key
    }

    /// Levenshtein distance over Unicode scalars, two rows of memory.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
