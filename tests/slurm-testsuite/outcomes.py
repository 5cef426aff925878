# SPDX-License-Identifier: Apache-2.0
"""Prints one line per test of a pytest JUnit XML report:
"python/FILE::TEST<TAB>passed|failed|skipped<TAB>detail" (the reason of a
skip, the first line of a failure), FILE relative to testsuite/python/tests."""
import sys
import xml.etree.ElementTree as ET


def outcome(case):
    for child in case:
        if child.tag in ("failure", "error"):
            return "failed", child.get("message") or child.tag
        if child.tag == "skipped":
            return "skipped", child.get("message") or "skipped"
    return "passed", ""


def test_id(case):
    # classname: tests.commands.srun.test_--chdir (dots stand for slashes;
    # test file names have no dots), name: test_chdir; a class in a module
    # adds its name: tests.commands.srun.test_x.Test_y.
    parts = case.get("classname", "").split(".")
    if parts and parts[0] == "tests":
        parts = parts[1:]
    module = [p for p in parts if not p.startswith("Test")]
    classes = [p for p in parts if p.startswith("Test")]
    return "python/" + "/".join(module) + ".py::" + "::".join(classes + [case.get("name", "")])


def main():
    for case in ET.parse(sys.argv[1]).iter("testcase"):
        state, detail = outcome(case)
        detail = " ".join(detail.split())[:200]
        print(f"{test_id(case)}\t{state}\t{detail}")


if __name__ == "__main__":
    main()
