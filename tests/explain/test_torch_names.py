"""torch_names.json (tools/explain_catalogue/torch_names.py: torch's modules and module names by
release, read from the release wheels' sources) and what `explain` makes of a missing torch name
with it: a lead to a package written for another torch when some release read has the name and
another lacks it; nothing for a name no release has (the program's typo) or one every release has.
The table is checked against the real torch installed here, where there is one: what it says the
last release read holds must be there, what it says that release lacks must not."""
from __future__ import annotations

import importlib
import json
import random

import pytest

from envcheck.explain import torch_names
from tests.explain.answers import answers, top_with_confidence

DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


@pytest.mark.parametrize("pkg", ["torch", "torchvision"])
def test_the_table_is_well_formed_and_ordered_by_release(pkg):
    doc = json.loads(torch_names.DATA.read_text())[pkg]
    rel = doc["releases"]
    assert rel == sorted(rel, key=lambda r: tuple(int(x) for x in r.split("."))) and len(rel) >= 5
    spans = list(doc["modules"].values()) + [x.split(":")[1] for s in doc["names"].values() for x in s.split()]
    assert spans and all(len(c) == 2 and DIGITS.index(c[0]) <= DIGITS.index(c[1]) < len(rel) for c in spans)
    assert all(m == pkg or m.startswith(pkg + ".") for m in [*doc["modules"], *doc["names"]])
    # a module every release has is no release's fault: never stored
    assert DIGITS[0] + DIGITS[len(rel) - 1] not in doc["modules"].values()


@pytest.mark.parametrize("text, api", [
    # nn.Mish came with torch 1.9 (in 1.13.1 of the releases read, not in 1.8.1)
    ("AttributeError: module 'torch.nn' has no attribute 'Mish'", "torch.nn.Mish"),
    # torch._dynamo came with 2.0
    ("ModuleNotFoundError: No module named 'torch._dynamo'", "torch._dynamo"),
    # torch.library.register_fake came with 2.4 (in 2.5.1, not in 2.1.2)
    ("  File \"ops.py\", line 3, in <module>\n    @torch.library.register_fake(\"mylib::op\")\n"
     "AttributeError: module 'torch.library' has no attribute 'register_fake'", "torch.library.register_fake"),
    # torch.distributed.fsdp came with 1.11 (in 1.13.1, not in 1.8.1)
    ("ImportError: cannot import name 'fsdp' from 'torch.distributed' (/opt/conda/lib/python3.8/site-packages/"
     "torch/distributed/__init__.py)", "torch.distributed.fsdp"),
    # torchvision's: transforms.v2 came with 0.15 (in 0.20.1 of the releases read, not in 0.14.1)
    ("ModuleNotFoundError: No module named 'torchvision.transforms.v2'", "torchvision.transforms.v2"),
    # InterpolationMode came with 0.9 (in 0.11.3, not in 0.8.2)
    ("ImportError: cannot import name 'InterpolationMode' from 'torchvision.transforms' "
     "(/usr/local/lib/python3.8/dist-packages/torchvision/transforms/__init__.py)",
     "torchvision.transforms.InterpolationMode"),
])
def test_a_name_another_release_has_is_a_lead_to_a_package_for_another_torch(text, api):
    assert answers(text) == {"package-torch-mismatch": "possible"}
    hit = next(iter(torch_names.find(text, text.lower())))
    assert hit[2] == api and hit[3].startswith(f"in {api.split('.')[0]} ")


@pytest.mark.parametrize("text", [
    # no release has it: the program's own typo
    "AttributeError: module 'torch' has no attribute 'foobarbaz'",
    "ImportError: cannot import name 'Convolution2D' from 'torch.nn'",
    # every release read has it: a local torch.py shadowing the package, not a release
    "AttributeError: module 'torch' has no attribute 'tensor'",
    "AttributeError: module 'torch.nn' has no attribute 'Linear'",
    # not torch's module
    "AttributeError: module 'numpy' has no attribute 'Mish'",
    # torchvision: a name no release has, one every release has
    "ImportError: cannot import name 'RandomFlipz' from 'torchvision.transforms'",
    "ImportError: cannot import name 'ToTensor' from 'torchvision.transforms'",
])
def test_a_name_no_release_lacks_or_none_has_is_not_read(text):
    assert "package-torch-mismatch" not in answers(text)


def test_a_wording_that_knows_the_name_keeps_its_surer_answer():
    # signatures.yaml reads torch._six's removal itself (likely): the table adds nothing weaker
    assert top_with_confidence("ModuleNotFoundError: No module named 'torch._six'") == ("package-torch-mismatch",
                                                                                        "likely")


@pytest.mark.torch
@pytest.mark.filterwarnings("ignore")
def test_the_last_release_read_is_what_the_installed_torch_holds():
    torch = pytest.importorskip("torch")
    doc = json.loads(torch_names.DATA.read_text())["torch"]
    last = len(doc["releases"]) - 1
    if torch.__version__.split("+")[0] != doc["releases"][-1]:
        pytest.skip(f"torch {torch.__version__} installed, the table's last release is {doc['releases'][-1]}")
    checked = 0
    rng = random.Random(7)
    for module in rng.sample(sorted(doc["names"]), 60):
        try:
            mod = importlib.import_module(module)
        except Exception:         # noqa: BLE001  (a module that needs an optional dependency to import)
            continue
        for item in doc["names"][module].split():
            name, code = item.split(":")
            held_last = DIGITS.index(code[1]) == last
            # a submodule is an attribute once imported, so only names that are not modules count here
            if f"{module}.{name}" in doc["modules"]:
                continue
            # private names are often defined under a run-time condition (`if has_triton():`, an
            # environment variable), which the table, reading the source, counts as defined
            if name.startswith("_"):
                continue
            if held_last:
                assert hasattr(mod, name), f"{module}.{name}: the table says {doc['releases'][-1]} has it"
            else:
                assert not hasattr(mod, name), f"{module}.{name}: the table says {doc['releases'][-1]} lacks it"
            checked += 1
    assert checked > 100


def _generator():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "tools" / "explain_catalogue" / "torch_names.py"
    spec = importlib.util.spec_from_file_location("_torch_names_gen", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_module_kept_importable_by_sys_modules_is_read_with_the_names_it_stands_for(tmp_path):
    # torch 2.5 moved DTensor to torch.distributed.tensor and keeps the old submodules importable by
    # a loop of sys.modules entries (torch/distributed/_tensor/__init__.py); _sharded_tensor assigns a
    # module object. A wheel with both shapes, and a sys.modules line naming no module, read:
    import zipfile
    whl = tmp_path / "torch-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.writestr("torch/__init__.py", "")
        z.writestr("torch/tensor_new/__init__.py", "")
        z.writestr("torch/tensor_new/mesh.py", "def init_device_mesh():\n    pass\n")
        z.writestr("torch/tensor_old/__init__.py",
                   "import sys\nfrom importlib import import_module\nsubmodules = ['mesh', 'gone']\n"
                   "for submodule in submodules:\n    full = f'torch.tensor_new.{submodule}'\n"
                   "    sys.modules[f'torch.tensor_old.{submodule}'] = import_module(full)\n")
        z.writestr("torch/legacy/__init__.py",
                   "import sys\nimport torch.tensor_new.mesh as _mesh\nsys.modules['torch.legacy_mesh'] = _mesh\n"
                   "sys.modules['torch.distributed'].GroupName = object\n")
    mods = _generator().read_release(str(whl))
    assert "init_device_mesh" in mods["torch.tensor_old.mesh"] and "mesh" in mods["torch.tensor_old"]
    assert "init_device_mesh" in mods["torch.legacy_mesh"]
    # an alias of a module the wheel does not have is no module
    assert "torch.tensor_old.gone" not in mods


def test_the_moved_dtensor_modules_are_read_as_the_installed_torch_has_them():
    torch = pytest.importorskip("torch")
    doc = json.loads(torch_names.DATA.read_text())["torch"]
    if torch.__version__.split("+")[0] != doc["releases"][-1]:
        pytest.skip(f"torch {torch.__version__} installed, the table's last release is {doc['releases'][-1]}")
    import torch.distributed._tensor.device_mesh as old
    assert hasattr(old, "init_device_mesh")
    code = doc["modules"]["torch.distributed._tensor.device_mesh"]
    assert DIGITS.index(code[1]) == len(doc["releases"]) - 1, code
    held = dict(x.split(":") for x in doc["names"].get("torch.distributed._tensor.device_mesh", "").split())
    assert "init_device_mesh" not in held or DIGITS.index(held["init_device_mesh"][1]) == len(doc["releases"]) - 1
