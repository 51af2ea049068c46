"""Make the nonce relation names shipped in ``stsim/data/nonce_words.txt``.

QSTRBench §3: nonce words are sampled from a character-trigram Markov chain and kept only
if they have seven letters and a Levenshtein distance of at least two from every word of an
English dictionary.  Here the chain is trained on the dictionary word list itself (the paper
trained on a novel), the dictionary is the Hunspell en_US stem list plus the Debian
``wamerican`` word list, and sampling uses a fixed seed, so the output is deterministic for a
given pair of dictionary files.

Usage::

    python scripts/make_nonce_words.py [--count 160] [--seed 2026] \
        [--hunspell /usr/share/hunspell/en_US.dic] [--words /usr/share/dict/american-english] \
        [-o stsim/data/nonce_words.txt]

(On Debian: ``apt-get install hunspell-en-us wamerican``.)
"""
from __future__ import annotations

import argparse
import string
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

LETTERS = string.ascii_lowercase


def read_dictionary(hunspell: Path, words: Path) -> set[str]:
    """Lower-case alphabetic words of both lists (Hunspell affix flags after '/' dropped)."""
    out = set()
    for i, line in enumerate(hunspell.read_text(encoding="utf-8", errors="replace").splitlines()):
        if i == 0 and line.strip().isdigit():
            continue
        w = line.split("/")[0].strip().lower()
        if w.isalpha():
            out.add(w)
    for line in words.read_text(encoding="utf-8", errors="replace").splitlines():
        w = line.strip().lower()
        if w.isalpha() and w.isascii():
            out.add(w)
    return out


def trigram_model(vocab: set[str]) -> dict[str, tuple[list[str], np.ndarray]]:
    """Two-letter context ('^^' at the start) -> (next characters, probabilities); '$' ends."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for w in sorted(vocab):
        if not w.isascii():
            continue
        s = "^^" + w + "$"
        for i in range(2, len(s)):
            counts[s[i - 2:i]][s[i]] += 1
    model = {}
    for ctx, c in counts.items():
        chars = sorted(c)
        p = np.array([c[ch] for ch in chars], float)
        model[ctx] = (chars, p / p.sum())
    return model


def near_dictionary(word: str, vocab: set[str]) -> bool:
    """True if ``word`` is within Levenshtein distance 1 of a dictionary word."""
    if word in vocab:
        return True
    for i in range(len(word) + 1):
        if i < len(word) and word[:i] + word[i + 1:] in vocab:
            return True
        for ch in LETTERS:
            if word[:i] + ch + word[i:] in vocab:
                return True
            if i < len(word) and ch != word[i] and word[:i] + ch + word[i + 1:] in vocab:
                return True
    return False


def sample(model, rng: np.random.Generator, max_len: int = 12) -> str:
    ctx, out = "^^", []
    while len(out) < max_len:
        chars, p = model[ctx]
        ch = chars[int(rng.choice(len(chars), p=p))]
        if ch == "$":
            break
        out.append(ch)
        ctx = ctx[1] + ch
    return "".join(out)


def make_nonce_words(vocab: set[str], count: int, seed: int) -> list[str]:
    """``count`` distinct seven-letter nonce words, in sampling order."""
    model = trigram_model(vocab)
    rng = np.random.default_rng(seed)
    found: list[str] = []
    seen = set()
    for _ in range(2_000_000):
        w = sample(model, rng)
        if len(w) != 7 or w in seen:
            continue
        seen.add(w)
        if not near_dictionary(w, vocab):
            found.append(w)
            if len(found) == count:
                return found
    raise RuntimeError(f"found only {len(found)} nonce words")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=160)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--hunspell", type=Path, default=Path("/usr/share/hunspell/en_US.dic"))
    ap.add_argument("--words", type=Path, default=Path("/usr/share/dict/american-english"))
    ap.add_argument("-o", "--out", type=Path, default=Path("stsim/data/nonce_words.txt"))
    a = ap.parse_args(argv)
    for p in (a.hunspell, a.words):
        if not p.exists():
            print(f"make_nonce_words: {p} not found (apt-get install hunspell-en-us wamerican)",
                  file=sys.stderr)
            return 2
    words = make_nonce_words(read_dictionary(a.hunspell, a.words), a.count, a.seed)
    a.out.write_text("\n".join(words) + "\n", encoding="utf-8")
    print(f"wrote {len(words)} nonce words to {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
