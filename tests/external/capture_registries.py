"""Capture real release metadata from the public npm registry and PyPI for hal0's
pinned-install tests (tests/it/pinned_installs.rs), which serve it back from a loopback
mirror so that no test talks to a public registry.

Owns: <repo>/.tools/registry-capture.json, written once (delete it to capture again).

For each package, the two newest releases, as the registry describes them:
  npm   @modelcontextprotocol/server-everything  GET https://registry.npmjs.org/<name>/<version>
                                                 (the release's manifest)
  PyPI  mcp-server-time                          GET https://pypi.org/pypi/<name>/json
                                                 (the release's files, from `releases`)
Usage: capture_registries.py OUT.json
"""

import json
import os
import sys
import urllib.request

NPM = "https://registry.npmjs.org"
PYPI = "https://pypi.org"
NPM_PACKAGE = "@modelcontextprotocol/server-everything"
PYPI_PACKAGE = "mcp-server-time"


def get(url: str):
    req = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "hal0-tests"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def npm_releases() -> dict:
    # The abbreviated document lists every version without their whole manifests.
    req = urllib.request.Request(
        f"{NPM}/{NPM_PACKAGE}",
        headers={"Accept": "application/vnd.npm.install-v1+json", "User-Agent": "hal0-tests"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        doc = json.load(r)
    latest = doc["dist-tags"]["latest"]
    versions = [v for v in doc["versions"] if "-" not in v]
    newest = sorted(versions, key=lambda v: [int(p) if p.isdigit() else p for p in v.split(".")])
    upto = newest[: newest.index(latest) + 1] if latest in newest else newest
    return {v: get(f"{NPM}/{NPM_PACKAGE}/{v}") for v in upto[-2:]}


def pypi_releases() -> dict:
    # The project's JSON (the per-release endpoint is not served by every mirror): each
    # release's files, as the project document lists them.
    doc = get(f"{PYPI}/pypi/{PYPI_PACKAGE}/json")
    dated = [
        (min(f["upload_time_iso_8601"] for f in files), v)
        for v, files in doc["releases"].items()
        if files and not all(f.get("yanked") for f in files)
    ]
    return {v: doc["releases"][v] for _, v in sorted(dated)[-2:]}


def main() -> None:
    out = sys.argv[1]
    doc = {
        "npm": {"name": NPM_PACKAGE, "releases": npm_releases()},
        "pypi": {"name": PYPI_PACKAGE, "releases": pypi_releases()},
    }
    for eco in ("npm", "pypi"):
        if len(doc[eco]["releases"]) != 2:
            sys.exit(f"capture_registries.py: {eco} gave {len(doc[eco]['releases'])} releases, want 2")
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f)
    os.replace(tmp, out)


if __name__ == "__main__":
    main()
