#!/usr/bin/env python3
"""Summarises bench/run.sh measurements.

  report.py throughput RAW.csv RESULTS.csv   medians over rounds, ratios to haproxy and direct
  report.py handshake RAW.csv RESULTS.csv    full-handshake cost: pins against policy default
  report.py instructions CALLGRIND.csv       instructions per fresh handshake: pins against default
  report.py memory MEMORY.csv                the memory table
  report.py connect RAW.csv RESULTS.csv UNAVAILABLE.txt "TARGETS"
                                             CONNECT phase (bench/connect.sh): medians, ratios, goals

The median over interleaved rounds is reported (robust to one disturbed run on a
shared machine); the CSV keeps min and max too so the spread is visible.
"""
import csv
import os
import statistics
import sys

METRICS = ["rps", "p50_ms", "p99_ms", "cpu_us_per_req", "rss_kib"]


def number(text):
    return float(text) if text not in ("", None) else None


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"


def throughput(raw_path, results_path):
    rows = list(csv.DictReader(open(raw_path)))
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    summary = {}
    for w in workloads:
        for t in targets:
            runs = [r for r in rows if r["workload"] == w and r["target"] == t]
            if not runs:
                continue
            s = {m: median(number(r[m]) for r in runs) for m in METRICS}
            s["rps_min"] = min(number(r["rps"]) for r in runs)
            s["rps_max"] = max(number(r["rps"]) for r in runs)
            s["errors"] = sum(int(r["errors"] or 0) for r in runs)
            s["rounds"] = len(runs)
            summary[(w, t)] = s

    fields = ["workload", "target", "rounds", "rps", "rps_min", "rps_max", "mb_per_s", "p50_ms", "p99_ms",
              "cpu_us_per_req", "rss_kib", "errors", "rps_vs_haproxy", "rps_vs_direct",
              "p99_vs_haproxy", "cpu_vs_haproxy", "rss_vs_haproxy"]
    with open(results_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        print()
        header = (f"{'workload':<15} {'target':<9} {'req/s':>9} {'MB/s':>7} {'p50 ms':>7} {'p99 ms':>7} "
                  f"{'CPU us/req':>10} {'RSS MiB':>7} {'err':>4} {'x haproxy':>9} {'x direct':>8} "
                  f"{'p99 x hap':>9} {'CPU x hap':>9}")
        print(header)
        print("-" * len(header))
        for w in workloads:
            hap = summary.get((w, "haproxy"), {})
            direct = summary.get((w, "direct"), {})
            for t in targets:
                s = summary.get((w, t))
                if s is None:
                    continue
                mbps = s["rps"] * 1.048576 if "1MiB" in w and s["rps"] is not None else None
                row = {
                    "workload": w, "target": t, "rounds": s["rounds"],
                    "rps": s["rps"], "rps_min": s["rps_min"], "rps_max": s["rps_max"], "mb_per_s": mbps,
                    "p50_ms": s["p50_ms"], "p99_ms": s["p99_ms"], "cpu_us_per_req": s["cpu_us_per_req"],
                    "rss_kib": s["rss_kib"], "errors": s["errors"],
                    "rps_vs_haproxy": ratio(s["rps"], hap.get("rps")),
                    "rps_vs_direct": ratio(s["rps"], direct.get("rps")),
                    "p99_vs_haproxy": ratio(s["p99_ms"], hap.get("p99_ms")),
                    "cpu_vs_haproxy": ratio(s["cpu_us_per_req"], hap.get("cpu_us_per_req")),
                    "rss_vs_haproxy": ratio(s["rss_kib"], hap.get("rss_kib")),
                }
                writer.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})
                rss_mib = s["rss_kib"] / 1024 if s["rss_kib"] is not None else None
                print(f"{w:<15} {t:<9} {fmt(s['rps'], 0):>9} {fmt(mbps, 0):>7} {fmt(s['p50_ms'], 3):>7} "
                      f"{fmt(s['p99_ms'], 3):>7} {fmt(s['cpu_us_per_req']):>10} {fmt(rss_mib):>7} {s['errors']:>4} "
                      f"{fmt(row['rps_vs_haproxy'], 2):>9} {fmt(row['rps_vs_direct'], 2):>8} "
                      f"{fmt(row['p99_vs_haproxy'], 2):>9} {fmt(row['cpu_vs_haproxy'], 2):>9}")
            print()
    print(f"medians of {max(s['rounds'] for s in summary.values())} interleaved rounds; CSV: {results_path}")
    paired_ratios(rows, workloads, targets)
    preemption_rounds(rows, workloads)
    steal_note(rows)


def preemption_rounds(rows, workloads):
    """pinproxy's and HAProxy's p99 in each round of the keep-alive workloads, each beside the
    proxy's preemptions per 1,000 requests in that run.

    On this two-CPU machine an upstream worker woken by the proxy's write may be placed on the
    proxy's CPU and stay there, preempting the proxy for about every request written to it;
    either proxy falls into that state in some runs and not in others (bench/README.md,
    cpu-share.sh), and the p99 of a run moves with it. The comparison of p99s is read with it."""
    runs = {}
    for r in rows:
        if r.get("preempted_per_kreq") not in ("", None) and r["target"] in ("pinproxy", "haproxy"):
            runs.setdefault(r["workload"], {}).setdefault(r["round"], {})[r["target"]] = r
    lines = []
    for w in workloads:
        if not w.startswith("ka-") or w not in runs:
            continue
        cells = []
        for pair in runs[w].values():
            if "pinproxy" in pair and "haproxy" in pair:
                p, h = pair["pinproxy"], pair["haproxy"]
                cells.append(f"{number(p['p99_ms']):.2f} ({number(p['preempted_per_kreq']):.0f}) / "
                             f"{number(h['p99_ms']):.2f} ({number(h['preempted_per_kreq']):.0f})")
        if cells:
            lines.append(f"{w:<15} " + "   ".join(cells))
    if lines:
        print()
        print("p99 ms (preemptions per 1,000 requests), pinproxy / haproxy, each round")
        for line in lines:
            print(line)


def paired_ratios(rows, workloads, targets):
    """Each round's req/s over HAProxy's in the same round, median [min, max] over rounds.

    Adjacent runs share the machine's state of the moment (another tenant's
    load, the host's clock), so a ratio within a round drifts less than the
    ratio of two medians taken over the whole run; its spread says how far a
    single round can be trusted."""
    rps = {}  # (workload, target) -> {round: req/s}
    for r in rows:
        if number(r["rps"]) is not None:
            rps.setdefault((r["workload"], r["target"]), {})[r["round"]] = number(r["rps"])
    lines = []
    for w in workloads:
        anchor = rps.get((w, "haproxy"), {})
        for t in targets:
            if t == "haproxy":
                continue
            each = [value / anchor[n] for n, value in rps.get((w, t), {}).items() if anchor.get(n)]
            if each:
                lines.append(f"{w:<15} {t:<9} {median(each):>6.2f}   [{min(each):.2f}, {max(each):.2f}]   "
                             + " ".join(f"{v:.2f}" for v in each))
    if lines:
        print()
        print("req/s x haproxy within each round: median [min, max]   each round")
        for line in lines:
            print(line)


def steal_note(rows):
    """One line on how much the hypervisor took during the counted runs (bench/run.sh measure)."""
    steals = [number(r.get("steal_pct")) for r in rows if r.get("steal_pct") not in ("", None)]
    if not steals:
        return
    limit = float(os.environ.get("STEAL_LIMIT", "5"))
    again = sum(1 for r in rows if int(r.get("attempts") or 1) > 1)
    over = sum(1 for v in steals if v > limit)
    print(f"steal (CPU time the hypervisor took, % of the host's) in the counted runs: median {median(steals):.1f}, "
          f"max {max(steals):.1f}; {again} of {len(rows)} runs measured again for steal over {limit:g} %, "
          f"{over} still over it")


def handshake(raw_path, results_path):
    rows = list(csv.DictReader(open(raw_path)))
    targets = list(dict.fromkeys(r["target"] for r in rows))
    summary = {}
    for t in targets:
        runs = [r for r in rows if r["target"] == t]
        summary[t] = {m: median(number(r[m]) for r in runs) for m in METRICS}
        summary[t]["cpu_each"] = [number(r["cpu_us_per_req"]) for r in runs]
        summary[t]["errors"] = sum(int(r["errors"] or 0) for r in runs)
        summary[t]["rounds"] = len(runs)
    ca = summary.get("pinproxy-fresh-ca", {}).get("cpu_us_per_req")
    stunnel = summary.get("stunnel-fresh", {}).get("cpu_us_per_req")
    print()
    print("handshake cost: Connection: close, 16 connections; pinproxy-fresh* and stunnel-fresh resume nothing")
    header = f"{'target':<18} {'req/s':>8} {'p99 ms':>7} {'CPU us/req':>10} {'x default':>9} {'x stunnel-fresh':>14} {'err':>4}  CPU per round"
    print(header)
    print("-" * len(header))
    with open(results_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["target", "rounds", "rps", "p99_ms", "cpu_us_per_req",
                                                 "cpu_vs_default_policy", "cpu_vs_stunnel_fresh", "errors"])
        writer.writeheader()
        for t in targets:
            s = summary[t]
            row = {"target": t, "rounds": s["rounds"], "rps": s["rps"], "p99_ms": s["p99_ms"],
                   "cpu_us_per_req": s["cpu_us_per_req"], "cpu_vs_default_policy": ratio(s["cpu_us_per_req"], ca),
                   "cpu_vs_stunnel_fresh": ratio(s["cpu_us_per_req"], stunnel), "errors": s["errors"]}
            writer.writerow({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
            each = " ".join(fmt(v) for v in s["cpu_each"])
            print(f"{t:<18} {fmt(s['rps'], 0):>8} {fmt(s['p99_ms'], 3):>7} {fmt(s['cpu_us_per_req']):>10} "
                  f"{fmt(row['cpu_vs_default_policy'], 3):>9} {fmt(row['cpu_vs_stunnel_fresh'], 2):>14} {s['errors']:>4}  {each}")
    pins = summary.get("pinproxy-fresh", {}).get("cpu_us_per_req")
    if pins is not None and ca:
        print(f"pin evaluation adds {100 * (pins / ca - 1):+.1f}% to the CPU of a fresh upstream handshake "
              f"(goal: under 5%); CSV: {results_path}")
    steal_note(rows)


def instructions(path):
    rows = list(csv.DictReader(open(path)))
    per_request = {}
    for target in dict.fromkeys(r["target"] for r in rows):
        runs = sorted((int(r["requests"]), int(r["instructions"])) for r in rows if r["target"] == target)
        (few, few_total), (many, many_total) = runs[0], runs[-1]
        per_request[target] = (many_total - few_total) / (many - few)
    print()
    print("instructions per Connection: close request with a full upstream handshake (callgrind, "
          "difference of two runs)")
    for target, value in per_request.items():
        print(f"{target:<18} {value:>14,.0f}")
    pins, default = per_request.get("pinproxy-fresh"), per_request.get("pinproxy-fresh-ca")
    if pins and default:
        print(f"pin evaluation adds {100 * (pins / default - 1):+.2f}% ({pins - default:+,.0f} instructions) "
              f"to a fresh upstream handshake (goal: under 5%); CSV: {path}")


def memory(path):
    rows = list(csv.DictReader(open(path)))
    print()
    print(f"{'proxy':<9} {'held conns':>10} {'base MiB':>9} {'idle KiB/conn':>14} {'after 1 req KiB/conn':>21}")
    for r in rows:
        print(f"{r['proxy']:<9} {int(r['connections']):>10,} {int(r['base_kib']) / 1024:>9.1f} "
              f"{float(r['idle_kib_per_conn']):>14.2f} {float(r['after_request_kib_per_conn']):>21.2f}")
    print(f"CSV: {path}")


# bench/connect.sh: each intercepting target is compared with squid ssl_bump, each blind
# tunnel with squid's plain CONNECT. The rate is MiB/s for the 1 MiB workload, req/s otherwise.
CONNECT_ANCHOR = {"pinproxy-intercept": "squid-bump", "mitmdump": "squid-bump", "pinproxy-tunnel": "squid-connect"}
DISTURBED_CORES = 0.25
CONNECT_METRICS = ["rps", "mib_s", "p50_ms", "p99_ms", "cpu_us_per_req", "client_cpu_us_per_req", "rss_kib", "tunnels",
                   "other_cpu_cores", "steal_cores"]
# Issue 15's goals: (workload prefix, target, anchor, [(quantity, op, bound)]); quantity is
# "cpu" (µs per request), "rate_x" (rate / anchor's rate) or "cpu_x" (CPU / anchor's CPU).
CONNECT_GOALS = [
    ("ka-100B", "pinproxy-intercept", "squid-bump", [("cpu", "<=", 40), ("rate_x", ">=", 2)]),
    ("new-100B", "pinproxy-intercept", "squid-bump", [("cpu", "<=", 400), ("rate_x", ">=", 1)]),
    ("ka-1MiB", "pinproxy-intercept", "squid-bump", [("rate_x", ">=", 2)]),
    ("ka-1MiB", "pinproxy-tunnel", "squid-connect", [("rate_x", ">=", 1), ("cpu_x", "<=", 1)]),
    ("ka-100B", "pinproxy-tunnel", "squid-connect", [("cpu_x", "<=", 1)]),
    ("new-100B", "pinproxy-tunnel", "squid-connect", [("cpu_x", "<=", 1)]),
]


def connect(raw_path, results_path, unavailable_path, targets_text):
    rows = list(csv.DictReader(open(raw_path)))
    unavailable = {}
    for line in open(unavailable_path):
        if "\t" in line:
            name, why = line.rstrip("\n").split("\t", 1)
            unavailable[name] = why
    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    targets = targets_text.split()
    summary = {}
    for w in workloads:
        for t in targets:
            every = [r for r in rows if r["workload"] == w and r["target"] == t]
            if not every:
                continue
            # On a shared machine, runs during which other work used more than a quarter of a
            # core are left out of the medians when at least one undisturbed run remains.
            quiet = [r for r in every if (number(r["other_cpu_cores"]) or 0) <= DISTURBED_CORES]
            runs = quiet or every
            s = {m: median(number(r[m]) for r in runs) for m in CONNECT_METRICS}
            s["all_rounds"] = len(every)
            s["disturbed_only"] = not quiet
            rates = [number(r["mib_s"] if "1MiB" in w else r["rps"]) for r in runs]
            cpus = [number(r["cpu_us_per_req"]) for r in runs]
            s["rate"] = median(rates)
            s["rate_min"] = min((v for v in rates if v is not None), default=None)
            s["rate_max"] = max((v for v in rates if v is not None), default=None)
            s["cpu_min"] = min((v for v in cpus if v is not None), default=None)
            s["cpu_max"] = max((v for v in cpus if v is not None), default=None)
            s["errors"] = sum(int(r["errors"] or 0) for r in runs)
            s["rounds"] = len(runs)
            s["first_error"] = next((r["first_error"] for r in runs if r["first_error"]), "")
            summary[(w, t)] = s

    def versus(w, t):
        anchor = CONNECT_ANCHOR.get(t)
        s, a = summary.get((w, t)), summary.get((w, anchor))
        if not s or not a:
            return anchor, None, None
        return anchor, ratio(s["rate"], a["rate"]), ratio(s["cpu_us_per_req"], a["cpu_us_per_req"])

    rounds = max((s["all_rounds"] for s in summary.values()), default=0)
    busy = [number(r["other_cpu_cores"]) for r in rows if number(r["other_cpu_cores"]) is not None]
    print()
    print(f"CONNECT: medians of {rounds} interleaved rounds (runs disturbed by other work, 'other' > "
          f"{DISTURBED_CORES} cores, left out while an undisturbed one remains; 'runs' = used/all, * = all "
          "disturbed); rate = req/s (MiB/s for 1 MiB); CPU = proxy utime+stime (with helper processes) over "
          "the window / requests; x anc = vs squid-bump (interception) or squid-connect (blind tunnel)")
    header = (f"{'workload':<13} {'target':<18} {'runs':>5} {'rate':>9} {'min':>9} {'max':>9} {'p50 ms':>7} "
              f"{'p99 ms':>8} {'CPU us/req':>10} {'rate x anc':>10} {'CPU x anc':>9} {'tunnels':>8} "
              f"{'other':>5} {'err':>5}")
    fields = ["workload", "target", "rounds", "all_rounds", "disturbed_only", "rate_unit", "rate", "rate_min", "rate_max", "rps", "mib_s", "p50_ms",
              "p99_ms", "cpu_us_per_req", "cpu_min", "cpu_max", "client_cpu_us_per_req", "rss_kib", "tunnels",
              "other_cpu_cores", "steal_cores", "errors", "anchor", "rate_vs_anchor", "cpu_vs_anchor", "note"]
    with open(results_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=fields)
        writer.writeheader()
        print(header)
        print("-" * len(header))
        for w in workloads:
            unit = "MiB/s" if "1MiB" in w else "req/s"
            for t in targets:
                s = summary.get((w, t))
                if s is None:
                    why = unavailable.get(t, "not measured")
                    print(f"{w:<13} {t:<18} n/a: {why}")
                    writer.writerow({"workload": w, "target": t, "rounds": 0, "note": why})
                    continue
                anchor, rate_x, cpu_x = versus(w, t)
                row = {"workload": w, "target": t, "rounds": s["rounds"], "all_rounds": s["all_rounds"],
                       "disturbed_only": s["disturbed_only"], "rate_unit": unit, "rate": s["rate"],
                       "rate_min": s["rate_min"], "rate_max": s["rate_max"], "rps": s["rps"], "mib_s": s["mib_s"],
                       "p50_ms": s["p50_ms"], "p99_ms": s["p99_ms"], "cpu_us_per_req": s["cpu_us_per_req"],
                       "cpu_min": s["cpu_min"], "cpu_max": s["cpu_max"],
                       "client_cpu_us_per_req": s["client_cpu_us_per_req"], "rss_kib": s["rss_kib"],
                       "tunnels": s["tunnels"], "other_cpu_cores": s["other_cpu_cores"],
                       "steal_cores": s["steal_cores"], "errors": s["errors"], "anchor": anchor or "",
                       "rate_vs_anchor": rate_x, "cpu_vs_anchor": cpu_x, "note": s["first_error"]}
                writer.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items()})
                digits = 1 if unit == "MiB/s" else 0
                used = f"{s['rounds']}/{s['all_rounds']}" + ("*" if s["disturbed_only"] else "")
                print(f"{w:<13} {t:<18} {used:>5} {fmt(s['rate'], digits):>9} {fmt(s['rate_min'], digits):>9} "
                      f"{fmt(s['rate_max'], digits):>9} {fmt(s['p50_ms'], 3):>7} {fmt(s['p99_ms'], 3):>8} "
                      f"{fmt(s['cpu_us_per_req']):>10} {fmt(rate_x, 2):>10} {fmt(cpu_x, 2):>9} "
                      f"{fmt(s['tunnels'], 0):>8} {fmt(s['other_cpu_cores'], 2):>5} {s['errors']:>5}"
                      + (f"  ({s['first_error']})" if s["errors"] else ""))
            print()

    goal_path = results_path.replace(".csv", "-goals.csv")
    print("issue 15's goals")
    header = f"{'workload':<13} {'comparison':<36} {'measured':<38} {'goal':<30} met"
    print(header)
    print("-" * len(header))
    ops = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}
    with open(goal_path, "w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=["workload", "target", "anchor", "quantity", "measured", "goal", "met"])
        writer.writeheader()
        for prefix, target, anchor, criteria in CONNECT_GOALS:
            w = next((w for w in workloads if w.startswith(prefix)), None)
            if w is None:
                continue
            s, a = summary.get((w, target)), summary.get((w, anchor))
            unit = "MiB/s" if "1MiB" in w else "req/s"
            measured, goals, met = [], [], []
            for quantity, op, bound in criteria:
                if quantity == "cpu":
                    value, text, goal = (s or {}).get("cpu_us_per_req"), "{:,.1f} us CPU/req", f"{op} {bound} us CPU/req"
                elif quantity == "rate_x":
                    value = ratio(s["rate"], a["rate"]) if s and a else None
                    text, goal = f"x{{:.2f}} {unit}", f"{op} {bound}x {unit}"
                else:
                    value = ratio(s["cpu_us_per_req"], a["cpu_us_per_req"]) if s and a else None
                    text, goal = "x{:.2f} CPU/req", f"{op} {bound}x CPU/req"
                ok = None if value is None else ops[op](value, bound)
                measured.append("n/a" if value is None else text.format(value))
                goals.append(goal)
                met.append(ok)
                writer.writerow({"workload": w, "target": target, "anchor": anchor, "quantity": quantity,
                                 "measured": None if value is None else round(value, 3), "goal": f"{op} {bound}",
                                 "met": "" if ok is None else ("yes" if ok else "no")})
            if any(m is None for m in met):
                missing = [t for t in (target, anchor) if (w, t) not in summary]
                verdict = "n/a (" + ", ".join(f"{t}: {unavailable.get(t, 'not measured')}" for t in missing) + ")"
            else:
                verdict = "yes" if all(met) else "NO"
            print(f"{w:<13} {target + ' vs ' + anchor:<36} {', '.join(measured):<38} {', '.join(goals):<30} {verdict}")
    disturbed = sum(1 for v in busy if v > DISTURBED_CORES)
    if disturbed:
        print(f"note: in {disturbed} of {len(busy)} runs other processes used more than {DISTURBED_CORES} of a "
              f"core (max {max(busy):.2f}); the medians leave those out where an undisturbed run exists "
              f"({sum(1 for s in summary.values() if s['disturbed_only'])} cells had none: '*')")
    print(f"CSV: {results_path}, {goal_path}, {raw_path}")


if __name__ == "__main__":
    if sys.argv[1] == "throughput":
        throughput(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "handshake":
        handshake(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "instructions":
        instructions(sys.argv[2])
    elif sys.argv[1] == "connect":
        connect(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        memory(sys.argv[2])
