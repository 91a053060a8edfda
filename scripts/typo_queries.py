#!/usr/bin/env python3
"""Writes testdata/typo-queries/: our coding and exact-recall queries, each with
one word misspelt the way fingers do it (issue 15, typo tolerance).

Rule, fixed so the set is reproducible: in each query, the longest word of
letters only, 6 letters or more (the first of equal length), gets its two
middle letters swapped (positions n//2-1 and n//2; if they are the same
letter, the next pair to the right). Queries with no such word are left
out. relevant, category and qid (with "-typo") are kept.

    python3 scripts/typo_queries.py
"""
import json, os, re

ROOT = os.path.join(os.path.dirname(__file__), "..", "testdata")
FOLDERS = ["paulukonis", "minsky", "docgen", "ktsu", "chefchopsky"]


def misspell(q):
    words = [m for m in re.finditer(r"[A-Za-z]+", q) if len(m.group()) >= 6]
    if not words:
        return None
    w = max(words, key=lambda m: len(m.group()))  # max keeps the first of equal length
    s = w.group()
    i = len(s) // 2 - 1
    while i + 1 < len(s) and s[i].lower() == s[i + 1].lower():
        i += 1
    if i + 1 >= len(s):
        return None
    t = s[:i] + s[i + 1] + s[i] + s[i + 2:]
    return q[: w.start()] + t + q[w.end():]


def main():
    out_dir = os.path.join(ROOT, "typo-queries")
    os.makedirs(out_dir, exist_ok=True)
    for f in FOLDERS:
        out = []
        for src in ("coding-queries", "exact-queries"):
            p = os.path.join(ROOT, src, f + ".jsonl")
            if not os.path.exists(p):
                continue
            for line in open(p):
                q = json.loads(line)
                t = misspell(q["query"])
                if t is None:
                    continue
                q = dict(q, qid=q["qid"] + "-typo", query=t, note="one word misspelt from " + src + " " + q["qid"])
                out.append(q)
        with open(os.path.join(out_dir, f + ".jsonl"), "w") as w:
            for q in out:
                w.write(json.dumps(q, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
