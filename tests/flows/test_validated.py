"""A validation that passed on the same bytes, parameters and suite code is not run again."""

from flows import validated


def test_the_key_follows_the_bytes_the_suite_and_its_parameters(tmp_path):
    path = tmp_path / "run.parquet"
    path.write_bytes(b"one")
    first = validated.key("run", {}, path)
    assert validated.key("run", {}, path) == first
    assert validated.key("qrels", {}, path) != first
    assert validated.key("run", {"max_grade": 3}, path) != first
    path.write_bytes(b"two")
    assert validated.key("run", {}, path) != first


def test_the_ledger_keeps_passed_keys_across_runs(tmp_path):
    ledger = validated.Ledger(tmp_path)
    assert "a" not in ledger
    ledger.add("a")
    ledger.add("b")
    again = validated.Ledger(tmp_path)
    assert "a" in again and "b" in again
    (tmp_path / validated.LEDGER).unlink()
    assert "a" not in validated.Ledger(tmp_path)  # revalidated


def test_the_ledger_keeps_the_most_recent_keys(tmp_path, monkeypatch):
    monkeypatch.setattr(validated, "KEEP", 2)
    ledger = validated.Ledger(tmp_path)
    for k in "abc":
        ledger.add(k)
    assert validated.Ledger(tmp_path).keys == ["b", "c"]


def test_the_suite_code_digest_covers_the_suites_module():
    from releval.project.closure import code_files

    assert "flows/validation.py" in code_files("flows.validation")
    assert len(validated.suite_code()) == 64
