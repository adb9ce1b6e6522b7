"""The front door of the deploy recipes: part (e) of check_recipes.py (the
ctest deploy_recipes), which imports this module and calls check().

The front door (docs/security.md, "HTTP/2 floods"): in every default recipe
(systemd/, the Containerfile's default command, compose.yaml, k8s/) each
tilecd listens on loopback (--host, ${VAR}s resolved from the recipe's
environment: systemd's Environment=, the image's ENV, compose's
environment:, Kubernetes' env:) on a fixed --port, and a haproxy with
deploy/haproxy/tilecd.cfg runs beside it (the units tilecd.service wants;
the same command; a service in its network namespace; a container of its
pod) with every ${VAR} of that file set and TILECD_ADDRESS at tilecd's
loopback port. The file counts when the haproxy reads it or a copy the
recipe makes (systemd: an `install ... deploy/haproxy/tilecd.cfg DEST` line
of a unit's comment; compose and Kubernetes: the Containerfile's COPY into
the tilec image; compose: a bind mount of haproxy/tilecd.cfg). No compose
port and no Kubernetes Service reaches tilecd's gRPC port; a Service
selecting tilecd's pods reaches the proxy's. With haproxy installed (PATH,
/usr/sbin, /sbin), `haproxy -c -f haproxy/tilecd.cfg` with each recipe's
environment (skipped, saying so, without). Compose and Kubernetes need
PyYAML (skipped, saying so).

The front door's flag rule, that no recipe passes
--allow_unsigned_shared_tier, is check_recipes.py's (FORBIDDEN, checked with
the other flags). Failures go to the caller's list; what passes is printed
under check_recipes.py's "check_recipes:" prefix.
"""

import os
import re
import shlex
import shutil
import subprocess

from recipes_common import DEPLOY, TILECD, argv_commands, rel, systemd_settings

PROXY_CFG = DEPLOY / "haproxy" / "tilecd.cfg"
HAPROXY = "haproxy"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
VAR_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\(([A-Za-z_][A-Za-z0-9_]*)\)"
                    r"|\$([A-Za-z_][A-Za-z0-9_]*)")


class Process:
    """A command a recipe runs, with its environment."""

    def __init__(self, where, words, env):
        self.where = where
        self.words = [w[0] if isinstance(w, tuple) else str(w) for w in words]
        self.env = {k: "" if v is None else str(v) for k, v in env.items()}
        self.binary = os.path.basename(self.words[0]) if self.words else ""

    def expand(self, text):
        """${VAR}, $VAR (systemd, shells) and $(VAR) (Kubernetes) from the
        environment; an unknown variable stays as written."""
        def one(m):
            name = m.group(1) or m.group(2) or m.group(3)
            return self.env[name] if name in self.env else m.group(0)
        return VAR_RE.sub(one, text) if text is not None else None

    def flag(self, name):
        """The value of --name (the last one given), expanded, or None."""
        value = None
        for i, w in enumerate(self.words[1:], 1):
            if not w.startswith("-"):
                continue
            key, eq, v = w.lstrip("-").partition("=")
            if key != name:
                continue
            if eq:
                value = v
            elif i + 1 < len(self.words) and not self.words[i + 1].startswith("-"):
                value = self.words[i + 1]
        return self.expand(value)

    def config_files(self):
        """haproxy's -f arguments, expanded."""
        out = []
        for i, w in enumerate(self.words[1:], 1):
            if w == "-f" and i + 1 < len(self.words):
                out.append(self.expand(self.words[i + 1]))
            elif w.startswith("-f") and len(w) > 2:
                out.append(self.expand(w[2:]))
        return out


def split_address(text):
    """(host, port) of HOST:PORT or [V6]:PORT, else None."""
    m = re.fullmatch(r"\[([^\]]+)\]:(\d+)|([^:\[\]]*):(\d+)", text or "")
    if not m:
        return None
    return (m.group(1) if m.group(1) is not None else m.group(3)), int(m.group(2) or m.group(4))


def proxy_cfg_vars():
    """The variables of haproxy/tilecd.cfg: all, those of bind lines, those of
    server lines."""
    every, binds, servers = [], [], []
    for line in PROXY_CFG.read_text().splitlines():
        line = line.split("#", 1)[0]
        names = re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", line)
        every += [n for n in names if n not in every]
        words = line.split()
        if words and words[0] == "bind":
            binds += [n for n in names if n not in binds]
        elif words and words[0] == "server":
            servers += [n for n in names if n not in servers]
    return every, binds, servers


def is_proxy_cfg(path, copies):
    if not path:
        return False
    if path in copies or path == str(PROXY_CFG):
        return True
    return path.lstrip("./") in ("deploy/haproxy/tilecd.cfg", "haproxy/tilecd.cfg")


def tilecd_address(proc, defaults):
    """(host, port text) tilecd's gRPC listens on, flags over their defaults."""
    host = proc.flag("host")
    port = proc.flag("port")
    return (defaults.get("host", "") if host is None else host,
            defaults.get("port", "0") if port is None else port)


class Group:
    """Processes that run beside each other (one unit and those it wants, one
    command, one network namespace, one pod), and the paths at which the
    recipe puts haproxy/tilecd.cfg."""

    def __init__(self, label, processes, copies):
        self.label, self.processes, self.copies = label, processes, set(copies)
        self.services = []       # compose: the services of the namespace
        self.tilecd_ports = []   # tilecd's gRPC ports, after the check
        self.proxy_ports = []    # the ports its proxies bind


def check_front_door(groups, defaults, failures):
    """Each tilecd on loopback, a haproxy with tilecd.cfg beside it pointing at
    it. Returns the environments of the proxies found (for haproxy -c)."""
    every, binds, servers = proxy_cfg_vars()
    if not servers:
        failures.append(f"{rel(PROXY_CFG)}: no `server NAME \"${{VAR}}\"` line (the recipes set "
                        "tilecd's address through it)")
    envs = []
    for g in groups:
        tilecds = [p for p in g.processes if p.binary == TILECD]
        proxies = [p for p in g.processes if p.binary == HAPROXY
                   and any(is_proxy_cfg(f, g.copies) for f in p.config_files())]
        for h in proxies:
            env = {v: h.expand(h.env.get(v, "")) for v in every}
            if env not in envs and all(env.values()):  # else said below
                envs.append(env)
        for t in tilecds:
            host, port_text = tilecd_address(t, defaults)
            if host not in LOOPBACK:
                failures.append(
                    f"{t.where}: tilecd listens on {host!r} (--host): the default recipes keep "
                    "it on loopback (127.0.0.1) behind HAProxy (deploy/haproxy/tilecd.cfg), "
                    "since its gRPC is open to HTTP/2 rapid reset (docs/security.md, "
                    "\"HTTP/2 floods\")")
            port = int(port_text) if port_text.isdigit() else 0
            if not port:
                failures.append(f"{t.where}: tilecd's --port is {port_text!r}: the proxy in front "
                                "needs a fixed port (its TILECD_ADDRESS)")
                continue
            g.tilecd_ports.append(port)
            if not proxies:
                failures.append(f"{t.where}: no haproxy with deploy/haproxy/tilecd.cfg runs beside "
                                f"this tilecd ({g.label})")
                continue
            problems = []
            for h in proxies:
                said = []
                for var in every:
                    if not h.env.get(var):
                        said.append(f"sets no {var}, which deploy/haproxy/tilecd.cfg reads")
                for var in servers:
                    value = h.expand(h.env.get(var, ""))
                    addr = split_address(value)
                    if value and (addr is None or addr[0] not in LOOPBACK or addr[1] != port):
                        said.append(f"has {var}={value!r}, not tilecd's loopback address "
                                    f"(127.0.0.1:{port})")
                for var in binds:
                    value = h.expand(h.env.get(var, ""))
                    addr = split_address(value)
                    if value and addr is None:
                        said.append(f"has {var}={value!r}, not HOST:PORT")
                    elif value and addr[1] == port:
                        said.append(f"has {var}={value!r}, tilecd's own port")
                if not said:
                    problems = []
                    g.proxy_ports += [split_address(h.expand(h.env[v]))[1] for v in binds]
                    print(f"check_recipes: front door: {t.where}: tilecd on {host}:{port} behind "
                          f"haproxy ({h.where}) on "
                          + ", ".join(h.expand(h.env[v]) for v in binds))
                    break
                problems += [f"{h.where}: the haproxy beside tilecd ({t.where}) {s}" for s in said]
            failures.extend(problems)
    return envs


def check_haproxy_config(haproxy, envs, failures):
    if not haproxy:
        print("check_recipes: SKIP haproxy -c: haproxy not found (PATH, /usr/sbin, /sbin)")
        return
    if not envs:
        every, _, _ = proxy_cfg_vars()
        envs = [{v: "127.0.0.1:0" for v in every}]
    for env in envs:
        shown = " ".join(f"{k}={v}" for k, v in env.items())
        try:
            p = subprocess.run([haproxy, "-c", "-f", str(PROXY_CFG)], capture_output=True,
                               text=True, timeout=60, env=dict(os.environ, **env))
        except (OSError, subprocess.TimeoutExpired) as e:
            failures.append(f"{shown} haproxy -c -f {rel(PROXY_CFG)}: cannot run: {e}")
            continue
        said = [line for line in (p.stdout + p.stderr).splitlines()
                if line.strip() and "[NOTICE]" not in line]
        if p.returncode != 0:
            failures.append(f"{shown} haproxy -c -f {rel(PROXY_CFG)} failed:\n    "
                            + "\n    ".join(said))
        else:
            warnings = [line for line in said if "[WARNING]" in line]
            print(f"check_recipes: {shown} haproxy -c -f {rel(PROXY_CFG)}: ok"
                  + ("".join("\n    " + w for w in warnings)))


# Where each recipe runs what, for the front door.

def systemd_units(directory):
    """name -> {env, wants (units named by Wants= and the like, either way),
    execs [(line, words)], copies} for each unit file."""
    units = {}
    for f in sorted(directory.glob("*.service")):
        u = {"path": f, "env": {}, "wants": set(), "wanted_by": set(), "execs": [],
             "copies": set()}
        for start, key, value in systemd_settings(f):
            if key is None:  # a comment: `install ... tilecd.cfg DEST` copies the config
                m = re.search(r"\binstall\b.*?(\S*deploy/haproxy/tilecd\.cfg)\s+(\S+)", value)
                if m:
                    u["copies"].add(m.group(2))
                continue
            if key == "Environment":
                for w in shlex.split(value):
                    k, _, v = w.partition("=")
                    u["env"][k] = v
            elif key in ("Wants", "Requires", "BindsTo", "Upholds"):
                u["wants"].update(value.split())
            elif key in ("WantedBy", "RequiredBy", "UpheldBy"):
                u["wanted_by"].update(value.split())
            elif key == "ExecStart" and value:
                words = shlex.split(value)
                words[0] = words[0].lstrip("@-:+!|")
                u["execs"].append((start, words))
        units[f.name] = u
    return units


def systemd_groups(directory):
    units = systemd_units(directory)
    copies = set().union(*(u["copies"] for u in units.values())) if units else set()
    groups = []
    for name, u in units.items():
        runs = lambda unit: [Process(f"{rel(unit['path'])}:{line}", words, unit["env"])
                             for line, words in unit["execs"]]
        mine = runs(u)
        if not any(p.binary == TILECD for p in mine):
            continue
        beside = [v for k, v in units.items() if k != name
                  and (k in u["wants"] or name in v["wanted_by"])]
        groups.append(Group(f"{rel(u['path'])} and the units it wants",
                            mine + [p for v in beside for p in runs(v)], copies))
    return groups


def image_group(image):
    procs = [Process(f"{rel(image.path)}:{words[0][1]}, the default command", words,
                     dict(image.env, **env))
             for env, words in argv_commands(image.default_argv())]
    return Group(f"{rel(image.path)}'s default command", procs, image.cfg_copies)


def words_of(value):
    """A compose or Kubernetes command (list or string) as (word, 0) pairs, or None."""
    if value is None:
        return None
    if isinstance(value, str):
        value = shlex.split(value)
    return [(str(w), 0) for w in value]


def is_tilec_image(name):
    return bool(name) and re.sub(r"[:@].*$", "", str(name)).rsplit("/", 1)[-1] == "tilec"


def container_processes(where, image, tilec, entrypoint, cmd, env):
    entrypoint, cmd = words_of(entrypoint), words_of(cmd)
    if tilec:
        argv = image.argv_with(entrypoint, cmd)
        base = dict(image.env)
    else:
        argv = (entrypoint or []) + (cmd or [])
        base = {}
    base.update(env)
    return [Process(where, words, dict(base, **e)) for e, words in argv_commands(argv)]


def container_port(spec):
    """The container side of a compose ports: entry."""
    if isinstance(spec, dict):
        return int(spec.get("target", 0) or 0)
    text = str(spec).split("/", 1)[0]
    last = text.rsplit(":", 1)[-1]
    return int(last) if last.isdigit() else 0


def compose_groups(path, doc, image):
    services = doc.get("services") or {}
    members = {}
    for name, svc in services.items():
        svc = svc or {}
        owner = name
        mode = str(svc.get("network_mode") or "")
        if mode.startswith("service:"):
            owner = mode.split(":", 1)[1]
        tilec = is_tilec_image(svc.get("image")) or (
            isinstance(svc.get("build"), dict)
            and str(svc["build"].get("dockerfile", "")).endswith("Containerfile"))
        env = svc.get("environment") or {}
        if isinstance(env, list):
            env = dict(e.split("=", 1) if "=" in e else (e, "") for e in env)
        copies = set(image.cfg_copies) if tilec else set()
        for vol in svc.get("volumes") or []:
            src, _, rest = vol.partition(":") if isinstance(vol, str) else (
                vol.get("source", ""), ":", vol.get("target", ""))
            if str(src).rstrip("/").endswith("haproxy/tilecd.cfg"):
                copies.add(rest.split(":", 1)[0])
        procs = container_processes(f"{rel(path)}: service {name}", image, tilec,
                                    svc.get("entrypoint"), svc.get("command"), env)
        g = members.setdefault(owner, Group(f"{rel(path)}: the services in {owner}'s network",
                                            [], set()))
        g.processes += procs
        g.copies |= copies
        g.services.append(name)
    return [(g, [services[s] or {} for s in g.services]) for g in members.values()]


def check_compose_ports(path, pairs, failures):
    for g, svcs in pairs:
        for svc, name in zip(svcs, g.services):
            for spec in svc.get("ports") or []:
                if container_port(spec) in g.tilecd_ports:
                    failures.append(f"{rel(path)}: service {name} publishes {spec}, tilecd's "
                                    "own gRPC port: publish the proxy's")


WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")


def k8s_groups(files, image):
    """(group, pod spec, pod labels, file) for each workload of the files."""
    import yaml
    out, services = [], []
    for f in files:
        for d in yaml.safe_load_all(f.read_text()):
            if not isinstance(d, dict):
                continue
            if d.get("kind") == "Service":
                services.append((f, d))
            if d.get("kind") not in WORKLOADS:
                continue
            name = f"{d['kind']}/{d.get('metadata', {}).get('name')}"
            pod = d.get("spec", {}).get("template", {})
            pspec = pod.get("spec", {})
            procs = []
            for c in pspec.get("containers", []):
                env = {e["name"]: e.get("value") for e in c.get("env") or []
                       if "name" in e and "value" in e}
                procs += container_processes(f"{rel(f)}: {name} container {c.get('name')}",
                                             image, is_tilec_image(c.get("image")),
                                             c.get("command"), c.get("args"), env)
            out.append((Group(f"{rel(f)}: {name}'s pod", procs, image.cfg_copies), pspec,
                        pod.get("metadata", {}).get("labels", {}), f))
    return out, services


def check_k8s_services(workloads, services, failures):
    for f, svc in services:
        selector = svc.get("spec", {}).get("selector") or {}
        where = f"{rel(f)}: Service/{svc.get('metadata', {}).get('name')}"
        for g, pspec, labels, _ in workloads:
            if not selector or any(labels.get(k) != v for k, v in selector.items()):
                continue
            if not g.tilecd_ports:
                continue
            named = {p.get("name"): p.get("containerPort")
                     for c in pspec.get("containers", []) for p in c.get("ports", [])}
            targets = []
            for sp in svc.get("spec", {}).get("ports", []):
                target = sp.get("targetPort", sp.get("port"))
                target = named.get(target, target) if isinstance(target, str) else target
                targets.append(target)
                if target in g.tilecd_ports:
                    failures.append(f"{where}: port {sp.get('name') or sp.get('port')} targets "
                                    f"tilecd's own gRPC port {target} ({g.label}): target the "
                                    "proxy's")
            if g.proxy_ports and not set(targets) & set(g.proxy_ports):
                failures.append(f"{where}: selects {g.label} but no port of it targets the "
                                f"proxy's ({', '.join(map(str, g.proxy_ports))})")


def find_haproxy():
    found = shutil.which("haproxy")
    if found:
        return found
    for d in ("/usr/sbin", "/sbin"):
        if os.access(os.path.join(d, "haproxy"), os.X_OK):
            return os.path.join(d, "haproxy")
    return ""


# --- (e), as check_recipes.py runs it ---------------------------------------

def check(image, compose, k8s_files, defaults, failures):
    """(e): the front door of the systemd units, the image's default command
    (`image`, check_recipes.read_image's), `compose` and `k8s_files`, and
    haproxy -c; `defaults` are tilecd's flag defaults (check_recipes.tilecd_flags)."""
    groups = systemd_groups(DEPLOY / "systemd") + [image_group(image)]
    try:
        import yaml
    except ImportError:
        yaml = None
        print("check_recipes: SKIP the front door of compose.yaml and k8s/: PyYAML is not "
              "installed")
    compose_pairs, workloads, services = [], [], []
    if yaml is not None:
        try:
            compose_pairs = compose_groups(compose, yaml.safe_load(compose.read_text()), image)
            workloads, services = k8s_groups(k8s_files, image)
        except yaml.YAMLError:
            pass  # check_recipes.check_yaml said so
        groups += [g for g, _ in compose_pairs] + [g for g, _, _, _ in workloads]
    envs = check_front_door(groups, defaults, failures)
    check_compose_ports(compose, compose_pairs, failures)
    check_k8s_services(workloads, services, failures)
    check_haproxy_config(find_haproxy(), envs, failures)
