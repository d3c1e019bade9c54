"""Generates the search benchmark's tree: 1,000 folders (10 × 100) of 100 files each.

Names mix case, spaces, digits and Chinese; one name in a hundred holds "Budget", so a
search for "budget" finds about 1,000 items.
"""
import os
import sys

WORDS = ["notes", "Photo", "report", "草稿", "Invoice", "scan", "年度总结", "draft", "Meeting Minutes", "todo"]


def build(root, tops=10, subs=100, files=100):
    os.makedirs(root, exist_ok=True)
    for t in range(tops):
        top = os.path.join(root, f"Area {t:02d}")
        for s in range(subs):
            folder = os.path.join(top, f"Project {s:03d} {WORDS[s % len(WORDS)]}")
            os.makedirs(folder, exist_ok=True)
            for f in range(files):
                word = "Budget" if (f * 7 + s) % 100 == 0 else WORDS[(f + s + t) % len(WORDS)]
                ext = [".txt", ".pdf", ".jpg", ".md"][f % 4]
                with open(os.path.join(folder, f"{word} {f:03d}{ext}"), "w"):
                    pass


if __name__ == "__main__":
    build(sys.argv[1])
