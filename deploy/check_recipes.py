#!/usr/bin/env python3
"""Keeps the deploy recipes from rotting (the ctest deploy_recipes).

  (a) Every --flag the recipes give tilecd or tilec-worker is a flag of that
      binary, as its --help lists them (tilec-worker's test-only flags are
      refused), and each command has the flags its binary requires.
  (b) Every tilecd of the fleet recipes (compose.yaml, k8s/, systemd/) passes
      each --redis... flag that the fleet e2e test runs tilecd with.
  (c) promtool check rules and promtool test rules on prometheus/ (skipped,
      saying so, without promtool).
  (d) The YAML files parse, compose's services name defined services, secrets
      and volumes, and the Kubernetes objects hold together (selectors,
      volumes, probe ports), when PyYAML is installed (skipped, saying so,
      without).
  (e) The front door (docs/security.md, "HTTP/2 floods"): every default
      recipe (systemd/, the Containerfile's default command, compose.yaml,
      k8s/) runs each tilecd on loopback behind a haproxy with
      deploy/haproxy/tilecd.cfg, and no compose port or Kubernetes Service
      reaches tilecd's own gRPC port; `haproxy -c` checks the file with each
      recipe's environment. These checks live in check_front_door.py (its
      docstring says what they read and require; haproxy -c, and compose and
      Kubernetes without PyYAML, are skipped, saying so). Its flag rule, no
      recipe passes --allow_unsigned_shared_tier, is checked here with (a)
      (FORBIDDEN).

Recipes read: systemd/*.service (Exec*= lines), compose.yaml and k8s/*.yaml
(lists under command:, args:, entrypoint:, test:), container/Containerfile
(ENTRYPOINT, CMD, HEALTHCHECK; an ENTRYPOINT of `sh -c SCRIPT ARG0` is read
as the script's commands, "$@" standing for CMD). A command list that starts
with a flag belongs to the command: or entrypoint: beside it, else to the
command of the image's ENTRYPOINT that receives the arguments (tilecd).

Usage: check_recipes.py --tilecd PATH --worker PATH --fleet-test PATH [--promtool PATH]
Exit status: 0 all checks pass, 1 a check failed (each failure names the file,
line and flag), 2 usage or a binary that cannot be run.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

# The modules beside this one, whatever the working directory.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_front_door  # noqa: E402  (e), the front door
from recipes_common import (DEPLOY, SHELLS, TILECD, WORKER,  # noqa: E402
                            argv_commands, rel, shell_commands, systemd_settings)

KNOWN = {TILECD, WORKER, "tilec"}
COMMAND_KEYS = ("command", "args", "entrypoint", "test")


class Invocation:
    """One command line of a recipe: the binary and its --flags with lines."""

    def __init__(self, path, line, binary):
        self.path, self.line, self.binary = path, line, binary
        self.flags = []  # (name, line)

    def where(self, line=None):
        return f"{rel(self.path)}:{line or self.line}"


def flag_name(token):
    if not token.startswith("--") or len(token) == 2:
        return None
    return token[2:].split("=", 1)[0]


def feed(invocations, current, tokens, line, path):
    """Adds `tokens` (all of one line) to `current` or to new invocations."""
    for token in tokens:
        if " " in token.strip() or "\n" in token:
            # A shell string (sh -c "..."): a known binary inside starts a
            # command of its own; the rest belongs to the shell.
            try:
                words = shlex.split(token)
            except ValueError:
                words = token.split()
            for w in words:
                if os.path.basename(w) in KNOWN:
                    current = Invocation(path, line, os.path.basename(w))
                    invocations.append(current)
                elif current is not None and current.binary in KNOWN and flag_name(w):
                    current.flags.append((flag_name(w), line))
            continue
        if current is None:
            current = Invocation(path, line, os.path.basename(token))
            invocations.append(current)
        elif os.path.basename(token) in KNOWN and not token.startswith("-"):
            current = Invocation(path, line, os.path.basename(token))
            invocations.append(current)
        elif flag_name(token):
            current.flags.append((flag_name(token), line))
    return current


# --- systemd --------------------------------------------------------------

def systemd_invocations(path):
    invocations = []
    for line, key, value in systemd_settings(path):
        if key is None or not key.startswith("Exec") or not value:
            continue
        words = shlex.split(value)
        if words:
            words[0] = words[0].lstrip("@-:+!|")
        feed(invocations, None, words, line, path)
    return invocations


# --- YAML (compose, Kubernetes), read as text -------------------------------

TOKEN_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\']|\'\')*)\'|([^\s,\[\]]+)')


def yaml_tokens(text):
    """The scalars of a line of a YAML list (flow or block), unquoted."""
    out = []
    for m in TOKEN_RE.finditer(text):
        if m.group(1) is not None:
            try:
                out.append(json.loads('"' + m.group(1) + '"'))
            except ValueError:  # a YAML escape JSON lacks
                out.append(m.group(1))
        elif m.group(2) is not None:
            out.append(m.group(2).replace("''", "'"))
        else:
            word = m.group(3)
            if word.startswith("#"):
                break  # a comment
            out.append(word)
    return out


def yaml_invocations(path, default_binary):
    lines = path.read_text().splitlines()
    invocations = []
    # The command: / entrypoint: lists of the mapping being read, by the
    # column of their key: an args: (or compose command:) list that starts
    # with a flag continues the invocation of its sibling.
    siblings = {}
    key_re = re.compile(r"^(\s*(?:-\s+)?)(%s)\s*:\s*(.*)$" % "|".join(COMMAND_KEYS))
    i = 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if stripped and not stripped.startswith("#"):
            for col in [c for c in siblings if c > indent]:
                del siblings[col]
        m = key_re.match(raw)
        if not m:
            i += 1
            continue
        col, key, rest = len(m.group(1)), m.group(2), m.group(3)
        for c in [c for c in siblings if c > col]:
            del siblings[c]
        # The block: the rest of the key's line and the lines under it.
        block = []
        if rest and rest not in ("|", ">", "|-", ">-"):
            block.append((i + 1, rest))
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            s = nxt.strip()
            ind = len(nxt) - len(nxt.lstrip())
            if not s or s.startswith("#"):
                j += 1
                continue
            if ind > col or (ind == col and s.startswith("- ")):
                block.append((j + 1, s[2:] if s.startswith("- ") else s))
                j += 1
                continue
            break
        if rest in ("|", ">", "|-", ">-"):
            block = [(block[0][0], " ".join(t for _, t in block))] if block else []
        tokens = [(n, t) for n, text in block for t in yaml_tokens(text)]
        if key == "test" and tokens and tokens[0][1] in ("CMD", "CMD-SHELL", "NONE"):
            tokens = tokens[1:]
        current = None
        if tokens and tokens[0][1].startswith("-"):
            current = siblings.get(col)
            if current is None:
                current = Invocation(path, tokens[0][0], default_binary)
                invocations.append(current)
        for n, t in tokens:
            current = feed(invocations, current, [t], n, path)
        if key in ("command", "entrypoint") and current is not None:
            siblings[col] = current
        i = j
    return invocations


# --- Containerfile ----------------------------------------------------------

class Image:
    """The Containerfile's final stage: what a container of the image runs."""

    def __init__(self, path):
        self.path = path
        self.entrypoint, self.cmd = [], []   # [(word, line)]
        self.env = {}                         # ENV of the final stage
        self.cfg_copies = set()               # where COPY put deploy/haproxy/tilecd.cfg
        self.healthchecks = []                # [(line, words)]
        self.shell_entrypoint = False         # ENTRYPOINT in shell form: CMD is ignored

    def default_argv(self):
        return self.entrypoint + ([] if self.shell_entrypoint else self.cmd)

    def argv_with(self, entrypoint=None, cmd=None):
        """The argv of a container that overrides ENTRYPOINT and/or CMD (None:
        the image's). A new ENTRYPOINT drops the image's CMD, as engines do."""
        if entrypoint is not None:
            return entrypoint + (cmd or [])
        return self.entrypoint + (cmd if cmd is not None else self.cmd)

    def args_binary(self):
        """The command of ENTRYPOINT that receives a container's arguments."""
        if (len(self.entrypoint) >= 3 and os.path.basename(self.entrypoint[0][0]) in SHELLS
                and self.entrypoint[1][0] == "-c"):
            sentinel = [("\0args", 0)]
            for _, words in shell_commands(self.entrypoint[2], sentinel):
                if ("\0args", 0) in words:
                    return os.path.basename(words[0][0])
            return None
        return os.path.basename(self.entrypoint[0][0]) if self.entrypoint else None


def read_image(path):
    image = Image(path)
    logical, start = "", 0
    for n, raw in enumerate(path.read_text().splitlines() + ["FROM end"], 1):
        if not logical and raw.lstrip().startswith("#"):
            continue
        if not logical:
            start = n
        if raw.rstrip().endswith("\\"):
            logical += raw.rstrip()[:-1] + " "
            continue
        logical += raw
        text, logical = logical.strip(), ""
        word = text.split(None, 1)[0].upper() if text else ""
        value = text.split(None, 1)[1] if len(text.split(None, 1)) > 1 else ""
        if word == "FROM":
            if value != "end":  # a new stage: only the last one's settings count
                image = Image(path)
        elif word in ("ENTRYPOINT", "CMD"):
            words = json.loads(value) if value.startswith("[") else ["sh", "-c", value]
            words = [(w, start) for w in words]
            if word == "ENTRYPOINT":
                image.entrypoint = words
                image.shell_entrypoint = not value.startswith("[")
            else:
                image.cmd = words
        elif word == "ENV":
            words = shlex.split(value)
            if words and "=" not in words[0]:
                image.env[words[0]] = " ".join(words[1:])  # ENV NAME value
            else:
                for w in words:
                    k, _, v = w.partition("=")
                    image.env[k] = v
        elif word == "COPY":
            words = [w for w in shlex.split(value) if not w.startswith("--")]
            if len(words) >= 2:
                for src in words[:-1]:
                    if src.rstrip("/").endswith("deploy/haproxy/tilecd.cfg"):
                        dest = words[-1]
                        if dest.endswith("/"):
                            dest += "tilecd.cfg"
                        image.cfg_copies.add(dest)
        elif word == "HEALTHCHECK":
            m = re.search(r"\bCMD\s+(.*)$", text)
            if m:
                v = m.group(1)
                image.healthchecks.append(
                    (start, json.loads(v) if v.startswith("[") else ["sh", "-c", v]))
    return image


def invocations_of(commands, path):
    """Invocations (for the flag checks) of argv_commands' commands."""
    invocations = []
    for _, words in commands:
        binary = os.path.basename(words[0][0])
        inv = Invocation(path, words[0][1], binary)
        invocations.append(inv)
        for w, line in words[1:]:
            if flag_name(w):
                inv.flags.append((flag_name(w), line))
    return invocations


def containerfile(path):
    """The invocations of the default command (ENTRYPOINT + CMD) and
    HEALTHCHECK, the binary a command list of flags belongs to, the image."""
    image = read_image(path)
    invocations = invocations_of(argv_commands(image.default_argv()), path)
    for line, words in image.healthchecks:
        feed(invocations, None, words, line, path)
    return invocations, image.args_binary(), image


# --- the binaries' flags ----------------------------------------------------

def die(message):
    print(f"check_recipes: {message}", file=sys.stderr)
    sys.exit(2)


def run_help(binary):
    try:
        p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        die(f"cannot run {binary} --help: {e}")
    return p.stdout + p.stderr


def tilecd_flags(binary, defaults=None):
    """(flags, required) from tilecd's abseil help: `    --name (help); default: ...`;
    each flag's default into `defaults`."""
    text = run_help(binary)
    flags, required = set(), set()
    entries = re.split(r"\n(?=    --)", text)
    for e in entries:
        m = re.match(r"\s{4}--([A-Za-z0-9_]+) \(", e)
        if m:
            flags.add(m.group(1))
            if "(required)" in e:
                required.add(m.group(1))
            d = re.search(r"; default: (\"[^\"]*\"|[^;]*);\s*$", e)
            if d is not None and defaults is not None:
                defaults[m.group(1)] = d.group(1).strip('"')
    if not flags:
        die(f"found no flags in `{binary} --help`:\n{text}")
    return flags, required, set()


def worker_flags(binary):
    """(flags, required, test_only) from tilec-worker's usage text."""
    text = run_help(binary)
    flags = set(re.findall(r"--([a-z][a-z0-9_]*)", text))
    test_only, in_test = set(), False
    for line in text.splitlines():
        if line.startswith("Test-only"):
            in_test = True
        elif line and not line[0].isspace():
            in_test = False
        if in_test:
            test_only.update(re.findall(r"--([a-z][a-z0-9_]*)", line))
    # Required: the flags of the usage lines outside [...].
    usage = text.split("\n\n", 1)[0]
    required = set(re.findall(r"--([a-z][a-z0-9_]*)", re.sub(r"\[[^\]]*\]", "", usage)))
    if not flags:
        die(f"found no flags in `{binary} --help`:\n{text}")
    return flags, required, test_only


def fleet_flags(test_file):
    text = Path(test_file).read_text()
    return sorted(set(re.findall(r'"--(redis[a-z0-9_]*)(?:=|")', text)))


# --- checks -----------------------------------------------------------------

# Flags no recipe may pass, and why.
FORBIDDEN = {
    (TILECD, "allow_unsigned_shared_tier"):
        "lets anyone who can write to Redis hand this server's clients an artifact; "
        "the recipes pass --signing_key",
}


def check_flags(invocations, known, failures):
    for inv in invocations:
        if inv.binary not in known:
            continue
        flags, required, test_only = known[inv.binary]
        given = set()
        for name, line in inv.flags:
            base = name
            if inv.binary == TILECD and name not in flags and name.startswith("no"):
                base = name[2:]  # abseil's --nofoo for a bool flag
            if base in test_only:
                failures.append(f"{inv.where(line)}: --{name} is a test-only flag of {inv.binary}")
            elif (inv.binary, base) in FORBIDDEN:
                failures.append(f"{inv.where(line)}: no recipe passes --{name}: "
                                f"{FORBIDDEN[(inv.binary, base)]}")
            elif base not in flags:
                failures.append(f"{inv.where(line)}: {inv.binary} has no flag --{name}")
            given.add(base)
        for name in sorted(required - given):
            failures.append(f"{inv.where()}: {inv.binary} needs --{name}, which this command lacks")


def check_fleet(recipes, wanted, failures):
    for label, invocations in recipes:
        tilecds = [i for i in invocations if i.binary == TILECD]
        if not tilecds:
            failures.append(f"{label}: no tilecd command found (the fleet recipe lost its tilecd?)")
        for inv in tilecds:
            given = {name for name, _ in inv.flags}
            for name in wanted:
                if name not in given:
                    failures.append(f"{inv.where()}: tilecd lacks --{name}, which the fleet "
                                    f"test runs tilecd with")


def check_promtool(promtool, failures):
    if not promtool:
        print("check_recipes: SKIP promtool checks: promtool not found (pass --promtool)")
        return
    rules, tests = DEPLOY / "prometheus" / "alerts.yml", DEPLOY / "prometheus" / "alerts_test.yml"
    for args in (["check", "rules", str(rules)], ["test", "rules", str(tests)]):
        p = subprocess.run([promtool] + args, capture_output=True, text=True)
        if p.returncode != 0:
            said = []
            for line in (p.stdout + p.stderr).splitlines():
                if line.strip() and line not in said:
                    said.append(line)
            failures.append(f"promtool {' '.join(args[:2])} {rel(args[2])} failed:\n    "
                            + "\n    ".join(said))
        else:
            print(f"check_recipes: promtool {' '.join(args[:2])} {rel(args[2])}: ok")


def check_compose(f, doc, failures):
    """Services name only services, secrets and volumes the file defines."""
    services = doc.get("services", {})
    secrets, volumes = set(doc.get("secrets") or {}), set(doc.get("volumes") or {})
    for name, svc in services.items():
        where = f"{rel(f)}: service {name}"
        deps = svc.get("depends_on") or []
        for dep in deps if isinstance(deps, list) else deps.keys():
            if dep not in services:
                failures.append(f"{where}: depends on {dep}, which is no service")
        for sec in svc.get("secrets") or []:
            source = sec if isinstance(sec, str) else sec.get("source")
            if source not in secrets:
                failures.append(f"{where}: uses secret {source}, which is not defined")
        for vol in svc.get("volumes") or []:
            source = vol.split(":", 1)[0] if isinstance(vol, str) else vol.get("source", "")
            if source and not source.startswith((".", "/", "~")) and source not in volumes:
                failures.append(f"{where}: mounts volume {source}, which is not defined")


def check_yaml(files, failures):
    try:
        import yaml
    except ImportError:
        print("check_recipes: SKIP YAML parsing: PyYAML is not installed")
        return
    before = len(failures)
    for f in files:
        try:
            docs = [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
        except yaml.YAMLError as e:
            failures.append(f"{rel(f)}: does not parse as YAML: {e}")
            continue
        if f.name == "compose.yaml":
            check_compose(f, docs[0], failures)
        if f.parent.name != "k8s":
            continue
        for d in docs:
            where = f"{rel(f)}: {d.get('kind')}/{d.get('metadata', {}).get('name')}"
            if not d.get("apiVersion") or not d.get("kind"):
                failures.append(f"{rel(f)}: a document without apiVersion or kind")
                continue
            if d["kind"] not in ("Deployment", "DaemonSet", "StatefulSet"):
                continue
            spec = d.get("spec", {})
            pod = spec.get("template", {})
            labels = pod.get("metadata", {}).get("labels", {})
            for k, v in spec.get("selector", {}).get("matchLabels", {}).items():
                if labels.get(k) != v:
                    failures.append(f"{where}: selector {k}={v} does not match the pod's labels")
            pspec = pod.get("spec", {})
            volumes = {v.get("name") for v in pspec.get("volumes", [])}
            for c in pspec.get("containers", []):
                ports = {p.get("name") for p in c.get("ports", [])}
                for vm in c.get("volumeMounts", []):
                    if vm.get("name") not in volumes:
                        failures.append(f"{where}: container {c.get('name')} mounts "
                                        f"{vm.get('name')}, which is no volume of the pod")
                for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                    for kind in ("tcpSocket", "httpGet", "grpc"):
                        port = c.get(probe, {}).get(kind, {}).get("port")
                        if isinstance(port, str) and port not in ports:
                            failures.append(f"{where}: {probe} names port {port}, which "
                                            f"container {c.get('name')} does not declare")
    if len(failures) == before:
        print(f"check_recipes: YAML: {len(files)} files parse; compose and Kubernetes "
              "references resolve")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tilecd", required=True)
    ap.add_argument("--worker", required=True)
    ap.add_argument("--fleet-test", required=True)
    ap.add_argument("--promtool", default="")
    args = ap.parse_args()

    defaults = {}
    known = {TILECD: tilecd_flags(args.tilecd, defaults), WORKER: worker_flags(args.worker)}
    wanted = fleet_flags(args.fleet_test)
    failures = []
    if not wanted:
        failures.append(f"{rel(args.fleet_test)}: found no \"--redis...\" flag literals "
                        "(has the fleet test moved?)")
    for name in wanted:
        if name not in known[TILECD][0]:
            failures.append(f"{rel(args.fleet_test)}: runs tilecd with --{name}, which "
                            "`tilecd --help` does not list")

    container, entrypoint, image = containerfile(DEPLOY / "container" / "Containerfile")
    default = entrypoint or TILECD
    systemd_files = sorted((DEPLOY / "systemd").glob("*.service"))
    compose = DEPLOY / "compose.yaml"
    k8s_files = sorted((DEPLOY / "k8s").glob("*.yaml"))

    per_file = {}
    for f in systemd_files:
        per_file[f] = systemd_invocations(f)
    for f in [compose] + k8s_files:
        per_file[f] = yaml_invocations(f, default)
    per_file[DEPLOY / "container" / "Containerfile"] = container

    all_invocations = [i for invs in per_file.values() for i in invs]
    check_flags(all_invocations, known, failures)
    check_fleet([
        (rel(compose), per_file[compose]),
        ("deploy/k8s", [i for f in k8s_files for i in per_file[f]]),
        (rel(DEPLOY / "systemd" / "tilecd.service"), per_file.get(DEPLOY / "systemd" / "tilecd.service", [])),
    ], wanted, failures)

    for f, invs in per_file.items():
        counted = [i for i in invs if i.binary in known]
        summary = ", ".join(f"{i.binary} ({len(i.flags)} flags, line {i.line})" for i in counted)
        print(f"check_recipes: {rel(f)}: {summary or 'no tilecd or tilec-worker command'}")
    print(f"check_recipes: fleet flags from {rel(args.fleet_test)}: "
          + " ".join("--" + n for n in wanted))

    promtool = args.promtool or shutil.which("promtool") or ""
    check_promtool(promtool, failures)
    check_yaml([compose] + k8s_files + [DEPLOY / "prometheus" / "alerts.yml",
                                        DEPLOY / "prometheus" / "alerts_test.yml"], failures)

    # (e) the front door.
    check_front_door.check(image, compose, k8s_files, defaults, failures)

    sys.stdout.flush()
    if failures:
        print(f"check_recipes: FAILED, {len(failures)} problem(s):", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        return 1
    print("check_recipes: all recipes pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
