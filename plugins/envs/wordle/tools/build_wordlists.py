"""Build the shipped word lists from SCOWL, as packaged by Debian (development time only).

    apt-get download wamerican-small wamerican-large
    dpkg-deb -x wamerican-small_*.deb small && dpkg-deb -x wamerican-large_*.deb large
    python tools/build_wordlists.py small/usr/share/dict/american-english-small \\
        large/usr/share/dict/american-english-large large/usr/share/doc/wamerican-large/copyright

Answers: the lower-case five-letter words of SCOWL size 35 (wamerican-small), without
Roman numerals and without plain inflections (a plural or past tense whose stem is also a
word), in a fixed shuffled order so that the task-id splits are not alphabetical.
Guesses: the answers plus every lower-case five-letter word of SCOWL size 70
(wamerican-large), without Roman numerals. Also prints the oracle's opening guess.
"""

from __future__ import annotations

import random
import re
import shutil
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "agenthub_env_wordle" / "data"
_FIVE = re.compile(r"[a-z]{5}")
_ROMAN = re.compile(r"m{0,4}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")


def read_words(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()}


def is_inflection(word: str, lexicon: set[str]) -> bool:
    if word.endswith(("ies", "ied")) and word[:-3] + "y" in lexicon:
        return True
    if word.endswith("s") and not word.endswith("ss") and (word[:-1] in lexicon or word[:-2] in lexicon):
        return True
    return word.endswith("ed") and (word[:-2] in lexicon or word[:-1] in lexicon)


def main(small: Path, large: Path, copyright_file: Path) -> None:
    lexicon = read_words(large)
    five = {w for w in read_words(small) if _FIVE.fullmatch(w) and not _ROMAN.fullmatch(w)}
    answers = sorted(w for w in five if not is_inflection(w, lexicon))
    random.Random("agenthub-wordle").shuffle(answers)
    guesses = sorted(five | {w for w in lexicon if _FIVE.fullmatch(w) and not _ROMAN.fullmatch(w)})
    (DATA / "answers.txt").write_text("\n".join(answers) + "\n", encoding="utf-8")
    (DATA / "guesses.txt").write_text("\n".join(guesses) + "\n", encoding="utf-8")
    shutil.copyfile(copyright_file, DATA / "SCOWL-COPYRIGHT.txt")
    print(f"{len(answers)} answers, {len(guesses)} guesses written to {DATA}")

    sys.path.insert(0, str(DATA.parent.parent))
    from agenthub_env_wordle.solver import best_guess

    print("oracle opening guess:", best_guess(answers, guesses))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
