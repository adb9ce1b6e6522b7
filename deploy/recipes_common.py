"""What check_recipes.py and check_front_door.py (the ctest deploy_recipes)
both use: where the deploy recipes are, the binaries' names, and the commands
a container's argv runs (`sh -c SCRIPT ARG0 ARGS...` read as the script's).
"""

import os
import re
import shlex
from pathlib import Path

DEPLOY = Path(__file__).resolve().parent
ROOT = DEPLOY.parent
TILECD, WORKER = "tilecd", "tilec-worker"


def rel(path):
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


# --- systemd unit files -----------------------------------------------------

SETTING_RE = re.compile(r"\s*([A-Za-z]+)\s*=\s*(.*)")


def systemd_settings(path):
    """The settings of a unit file, continued lines joined, as (line, key,
    value) with `line` where the setting starts; comment lines outside a
    setting as (line, None, the comment)."""
    logical, start = "", 0
    for n, raw in enumerate(Path(path).read_text().splitlines(), 1):
        if not logical and raw.lstrip().startswith(("#", ";")):
            yield n, None, raw
            continue
        if not logical:
            start = n
        if raw.endswith("\\"):
            logical += raw[:-1] + " "
            continue
        logical += raw
        m = SETTING_RE.match(logical)
        logical = ""
        if m:
            yield start, m.group(1), m.group(2).strip()


# --- shell scripts (sh -c) --------------------------------------------------

SHELLS = ("sh", "bash", "dash")
ASSIGN_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


def shell_commands(script, positional):
    """The simple commands of a shell script as (env, words): "$@" and "$*"
    stand for `positional`, leading NAME=VALUE words are the command's
    environment, `exec` is dropped. Words are (text, line) pairs."""
    text = script[0]
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        tokens = text.split()
    commands, current = [], []
    for tok in tokens + [";"]:
        if tok and set(tok) <= set("&;|()"):
            if current:
                commands.append(current)
            current = []
        elif tok in ("$@", "$*"):
            current.extend(positional)
        else:
            current.append((tok, script[1]))
    out = []
    for words in commands:
        env = {}
        while words and ASSIGN_RE.match(words[0][0]):
            m = ASSIGN_RE.match(words[0][0])
            env[m.group(1)] = m.group(2)
            words = words[1:]
        if words and words[0][0] == "exec":
            words = words[1:]
        if words:
            out.append((env, words))
    return out


def argv_commands(argv):
    """The commands a container's argv runs, as (env, words) with words as
    (text, line): `sh -c SCRIPT [ARG0 ARGS...]` is the script's commands,
    ARGS standing for "$@"; anything else is one command."""
    if (len(argv) >= 3 and os.path.basename(argv[0][0]) in SHELLS and argv[1][0] == "-c"):
        return shell_commands(argv[2], argv[4:])
    return [({}, argv)] if argv else []
