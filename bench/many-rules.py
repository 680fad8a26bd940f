#!/usr/bin/env python3
"""Writes a pinproxy configuration with many host rules (issue 17: cost as the configuration grows).

Every rule is a distinct host name under policy "pin-public-keys" with two pins, in a mix that
looks like a real fleet rather than one rule copied: hosts come in organisations of 1-4 that share
a primary key and a backup pin, backup pins come from a pool of 200 (offline backup keys are reused
across fleets), and some rules widen or relax the default (about 10% include_subdomains, 5% "*."
and 5% "**." keys, 10% report-only, 10% with an expiry date, 5% TLS 1.3 only). The output is deterministic for a given --seed, so two runs
measure the same input.

  bench/many-rules.py --rules 100000 > big.json             # pretty (2-space indent)
  bench/many-rules.py --rules 100000 --one-line > big.json  # one line, as `jq -c` writes it
  bench/many-rules.py --rules 100000 --base base.json --change 3 > big.json

--base FILE: a configuration whose other keys (and hosts) are kept; the generated rules are added
after its own hosts. --change K: rule K gets a different primary pin (a reload with one rule
changed). --rules 0 writes the base (or an empty hosts section): the baseline for bytes per rule.
"""
import argparse
import base64
import json
import random
import sys


def pin(rng):
    return "sha256/" + base64.b64encode(rng.randbytes(32)).decode("ascii")


def rules(count, seed, change):
    rng = random.Random(seed)
    backups = [pin(rng) for _ in range(200)]
    out = {}
    index = 0
    organisation = 0
    while index < count:
        organisation += 1
        primary, backup = pin(rng), rng.choice(backups)
        domain = f"org{organisation}.example"
        for host in range(min(rng.randint(1, 4), count - index)):
            shape = rng.random()
            label = f"h{host}" if host else "www"
            if shape < 0.05:
                key = f"*.{label}.{domain}"
            elif shape < 0.10:
                key = f"**.{label}.{domain}"
            else:
                key = f"{label}.{domain}"
            first = pin(rng) if index == change else primary
            policy = {"policy": "pin-public-keys", "pins": [first, backup]}
            if 0.10 <= shape < 0.20:
                policy["include_subdomains"] = True
            if rng.random() < 0.10:
                policy["enforce"] = False
            if rng.random() < 0.10:
                policy["expires"] = f"{rng.randint(2030, 2035)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
            if rng.random() < 0.05:
                policy["min_tls_version"] = "1.3"
            out[key] = policy
            index += 1
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rules", type=int, required=True)
    parser.add_argument("--one-line", action="store_true", help="no whitespace, as jq -c writes it")
    parser.add_argument("--base", help="configuration to add the rules to")
    parser.add_argument("--change", type=int, default=-1, help="rule index that gets another primary pin")
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args()

    config = {"violation_log": "/tmp/pinproxy-many-rules-violations.jsonl"}
    if args.base:
        with open(args.base) as f:
            config = json.load(f)
    hosts = config.setdefault("hosts", {})
    for key, policy in rules(args.rules, args.seed, args.change).items():
        if key in hosts:
            sys.exit(f"generated key {key} is already in the base configuration")
        hosts[key] = policy
    if args.one_line:
        json.dump(config, sys.stdout, separators=(",", ":"))
    else:
        json.dump(config, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
