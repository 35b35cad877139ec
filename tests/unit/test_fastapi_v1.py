"""FastAPI is kept from importing pydantic.v1 as routes are declared (evalsvc.api.fastapi_v1):
no function's start imports it, and a pydantic.v1 model is still refused once something has
imported pydantic.v1. Each in a fresh interpreter, whose imports are its own."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

EVERY_HANDLER = f"""
import importlib.util, pathlib, sys
for app in sorted(pathlib.Path({str(ROOT / "functions")!r}).glob("*/app.py")):
    spec = importlib.util.spec_from_file_location(app.parent.name, app)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.handler), app
print("pydantic.v1" in sys.modules)
"""

V1_MODEL_ROUTE = """
import evalsvc.api
from fastapi import APIRouter
from pydantic import v1

class Old(v1.BaseModel):
    name: str

router = APIRouter()
try:
    @router.post("/old")
    def old(body: Old) -> None:
        pass
except Exception as exc:
    print(type(exc).__name__)
else:
    print("declared")
"""


def run(code: str) -> str:
    env = {"AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip()


def test_no_function_imports_pydantic_v1_as_it_starts() -> None:
    assert run(EVERY_HANDLER) == "False"


def test_a_pydantic_v1_model_is_still_refused_once_pydantic_v1_is_imported() -> None:
    assert run(V1_MODEL_ROUTE) == "PydanticV1NotSupportedError"
