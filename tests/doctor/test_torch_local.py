"""A doctor PASS says a training rank can start: on a Python without torch it is FAIL, --quick
included (one `import torch` through the probe's torch_import section, no GPU op)."""
from __future__ import annotations

import json


def test_quick_local_doctor_on_a_python_without_torch_is_fail_not_pass(cli):
    # /usr/bin/python3: the machine's own, which has no torch (tests/conftest.py makes sure)
    r = cli("doctor", "--local", "--quick", "--no-expect-gpus", "--node-python", "/usr/bin/python3", "--json",
            timeout=120)
    doc = json.loads(r.stdout)
    assert (r.returncode, doc["verdict"]) == (1, "FAIL"), doc["nodes"]
    (torch,) = [c for c in doc["checks"] if c["check"] == "torch"]
    assert torch["code"] == "torch-not-importable" and "No module named 'torch'" in torch["message"]
