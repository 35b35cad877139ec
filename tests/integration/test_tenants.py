"""A tenant's datasets do not exist for another tenant: reads, overwrites and additions."""

from __future__ import annotations

from tests.integration.conftest import Tenant, ok


def test_other_tenant_cannot_read_a_dataset(acme: Tenant, globex: Tenant) -> None:
    ok(
        acme.post(
            "/data/seed/shared-name", {"data": [{"id": "a", "input": "secret", "output": "x"}]}
        )
    )

    response = globex.get("/data/seed/shared-name")

    assert response.status_code == 404
    assert response.json() == {"error": "no seed dataset with id 'shared-name'"}


def test_other_tenant_cannot_add_a_pair(acme: Tenant, globex: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": []}))

    response = globex.post("/data/seed/ds/pair", {"input": "i", "output": "o"})

    assert response.status_code == 404
    assert acme.get("/data/seed/ds").json()["data"] == []


def test_same_id_written_by_another_tenant_is_a_separate_dataset(
    acme: Tenant, globex: Tenant
) -> None:
    ok(
        acme.post(
            "/data/seed/ds",
            {"data": [{"id": "a", "input": "acme", "output": "x"}], "system_prompt": "A"},
        )
    )

    ok(
        globex.post(
            "/data/seed/ds",
            {"data": [{"id": "g", "input": "globex", "output": "y"}], "system_prompt": "G"},
        )
    )

    assert [p["input"] for p in acme.get("/data/seed/ds").json()["data"]] == ["acme"]
    assert acme.get("/data/seed/ds").json()["system_prompt"] == "A"
    assert [p["input"] for p in globex.get("/data/seed/ds").json()["data"]] == ["globex"]


def test_latest_and_prompt_lookup_stay_within_the_tenant(acme: Tenant, globex: Tenant) -> None:
    ok(acme.post("/data/seed/acme-only", {"data": [], "system_prompt": "T"}))

    assert globex.get("/data/seed/latest").status_code == 404
    filed = globex.post(
        "/data/seed/pair", {"input": "i", "output": "o", "system_prompt_template": "T"}
    ).json()

    assert filed["dataset_id"] != "acme-only"
    assert acme.get("/data/seed/acme-only").json()["data"] == []


def test_other_tenant_cannot_read_synthetic_data(acme: Tenant, globex: Tenant) -> None:
    from evalsvc.logic.datasets import import_synthetic_dataset

    header = import_synthetic_dataset("acme", [("i", "o")])

    assert acme.get(f"/data/synthetic/{header.dataset_id}").status_code == 200
    assert globex.get(f"/data/synthetic/{header.dataset_id}").status_code == 404
    assert globex.get("/data/synthetic/latest").status_code == 404
