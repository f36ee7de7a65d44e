"""The `relay` command: `relay up` runs Relay on this machine, `relay status` says if one runs,
`relay demo` plays the demo story against it, `relay mcp --tenant <t>` serves the tool catalogue
over stdio to a local MCP client, `relay admin ...` snapshots, resets, deletes and forgets,
`relay backup DEST` / `relay restore SRC` copy the whole data folder, `relay move-tenant T --to ...`
moves one tenant to another deployment (one server or a cluster)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from relay_cli import lock as locks
from relay_cli.services import parse_scale
from relay_cli.settings import CliSettings
from relay_cli.up import STATE_NAME, UpOptions, up as run_up

app = typer.Typer(
    name="relay",
    help="Relay: shared, time-aware graph memory for teams of AI agents.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


def _data_dir(option: Optional[Path], settings: CliSettings) -> Path:
    return Path(option or settings.data_dir).expanduser().resolve()


def _graph_settings():
    """The RELAY_* settings, with the password a `relay up` on RELAY_DATA_DIR keeps when
    RELAY_FALKORDB_PASSWORD is not set, and its cluster's seeds when it runs one. Every command that
    reaches the graph starts here, so here the desk's vocabulary and indexes are loaded (a reset
    recreates the desk's indexes as well as the engine's)."""
    import relay_graph.desk  # noqa: F401
    from relay_graph.runtime.config import GraphSettings

    from relay_cli.admin_key import PASSWORD_FILE, kept

    settings = GraphSettings()
    if not settings.falkordb_password:
        settings.falkordb_password = kept(Path(settings.data_dir).expanduser(), PASSWORD_FILE)
    if not settings.falkordb_cluster:  # a `relay up --shards` on this data folder: its cluster
        state = locks.read_info(Path(settings.data_dir).expanduser() / STATE_NAME)
        settings.falkordb_cluster = state.get("falkordb_cluster") or ""
    return settings


@app.command()
def up(
    scale: list[str] = typer.Option(
        None, "--scale", metavar="SERVICE=N", help="replicas of a service, e.g. --scale resolver=3 (0 leaves it off)"
    ),
    port: Optional[int] = typer.Option(None, "--port", help="the gateway's port (env RELAY_PORT; default 8000)"),
    data_dir: Optional[Path] = typer.Option(
        None, "--data-dir", help="database, logs and admin key (env RELAY_DATA_DIR; default .relay/data)"
    ),
    no_demo: bool = typer.Option(False, "--no-demo", help="do not play the demo story once Relay is up"),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="seconds to wait for /readyz (default 180)"),
    shards: int = typer.Option(0, "--shards", min=0, help="run FalkorDB as a cluster of N primaries "
                               "(0: one server); ports from RELAY_FALKORDB_PORT up"),
    falkordb_replicas: int = typer.Option(1, "--replicas", min=0, help="with --shards: replicas per primary"),
) -> None:
    """Start FalkorDB and every service as its own process, as docker compose would; Ctrl-C stops all."""
    settings = CliSettings()
    try:
        replicas = parse_scale(scale)
    except ValueError as exc:
        console.print(f"[red]{exc}[/]", highlight=False)
        raise typer.Exit(2)
    key = settings.admin_key.get_secret_value() if settings.admin_key else None
    opts = UpOptions(
        falkordb_password_env=settings.falkordb_password or None,
        data_dir=_data_dir(data_dir, settings),
        port=port or settings.port,
        falkordb_port=settings.falkordb_port,
        model_dir=Path(settings.model_dir).expanduser().resolve(),
        replicas=replicas,
        admin_key_env=key or None,
        demo=not no_demo,
        shards=shards,
        falkordb_replicas=falkordb_replicas,
        ready_timeout_s=timeout or settings.ready_timeout_s,
        falkordb_max_restarts=settings.falkordb_max_restarts,
        falkordb_restart_window_s=settings.falkordb_restart_window_s,
    )
    raise typer.Exit(run_up(opts, console))


@app.command()
def status(
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="(env RELAY_DATA_DIR; default .relay/data)"),
) -> None:
    """Say whether a Relay runs on this data folder, and which process is which. Exit 0 if it runs, 3 if not."""
    folder = _data_dir(data_dir, CliSettings())
    info = locks.holder(folder)
    if info is None:
        console.print(f"no Relay is running with data folder {folder}")
        raise typer.Exit(3)
    console.print(
        f"Relay is running: pid {info.get('pid', '?')}, gateway http://127.0.0.1:{info.get('port', '?')}, "
        f"FalkorDB port {info.get('falkordb_port', '?')}, data {folder}"
    )
    state = locks.read_info(folder / STATE_NAME)
    if state.get("processes"):
        table = Table()
        for col in ("service", "replica", "pid", "alive", "metrics", "log"):
            table.add_column(col)
        for p in state["processes"]:
            table.add_row(
                p["service"], str(p["replica"] or "-"), str(p["pid"]), "yes" if _alive(p["pid"]) else "no",
                p.get("metrics") or "-", p["log"]
            )
        console.print(table)
    else:
        console.print("(still starting: no process table yet)")


@app.command()
def demo(
    url: Optional[str] = typer.Option(
        None, "--url", help="the gateway (default: the running Relay's, else RELAY_PORT)"
    ),
    admin_key: Optional[str] = typer.Option(
        None, "--admin-key", help="creates the story's tenant (default: RELAY_ADMIN_KEY, else the data folder's key)"
    ),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="(env RELAY_DATA_DIR; default .relay/data)"),
) -> None:
    """Play the demo story against a running Relay, through its HTTP API; exit 1 if a check fails."""
    settings = CliSettings()
    folder = _data_dir(data_dir, settings)
    state = locks.read_info(folder / STATE_NAME)
    base = url or state.get("url") or f"http://127.0.0.1:{settings.port}"
    key = admin_key or (settings.admin_key.get_secret_value() if settings.admin_key else None)
    if not key:
        key_file = folder / "admin.key"  # kept by `relay up` (relay_cli.admin_key); only read here
        key = key_file.read_text().strip() if key_file.is_file() else None
    if not key:
        console.print(f"[red]no admin key: pass --admin-key, set RELAY_ADMIN_KEY, or run `relay up` with data "
                      f"folder {folder}[/]", highlight=False)
        raise typer.Exit(2)
    from services.simulator.demo import run as play_demo  # the services package ships beside the CLI

    raise typer.Exit(play_demo(base, key))


@app.command("mcp")
def mcp_command(
    tenant: str = typer.Option(..., "--tenant", help="the tenant whose graph the tools use"),
    agent: Optional[str] = typer.Option(
        None, "--agent", help="the name your writes carry, as mcp:<name> (default: the MCP client's own name)"
    ),
) -> None:
    """Serve the tool catalogue over stdio for a local MCP client (FalkorDB from the RELAY_* settings)."""
    from relay_graph.runtime.errors import InvalidTenant
    from relay_graph.runtime.tenancy import validate_tenant

    try:
        validate_tenant(tenant)
    except InvalidTenant as exc:
        typer.echo(exc.message, err=True)  # stdout is the MCP wire
        raise typer.Exit(2)
    from relay_graph.tools.stdio import run as serve_stdio

    serve_stdio(tenant, agent=agent, settings=_graph_settings())


@app.command("backup")
def backup_command(
    dest: Path = typer.Argument(..., help="a new (or empty) folder for the backup"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="(env RELAY_DATA_DIR; default .relay/data)"),
) -> None:
    """Copy the whole data folder (every graph, stream and key) into DEST; Relay may keep running."""
    from relay_cli import backup as backups

    folder = _data_dir(data_dir, CliSettings())
    try:
        receipt = backups.backup(folder, dest)
    except backups.BackupError as exc:
        console.print(f"[red]{exc}[/]", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    console.print(f"backed up {folder} into {receipt.dest}: {len(receipt.graphs)} graphs, {receipt.keys} keys, "
                  f"{receipt.bytes:,} bytes", highlight=False, soft_wrap=True)


@app.command("restore")
def restore_command(
    src: Path = typer.Argument(..., help="a folder written by `relay backup`"),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="(env RELAY_DATA_DIR; default .relay/data)"),
    replace: bool = typer.Option(False, "--replace", help="overwrite the database already in the data folder"),
) -> None:
    """Make the data folder a copy of backup SRC. Refused while a Relay runs on that folder (stop it first)."""
    from relay_cli import backup as backups

    folder = _data_dir(data_dir, CliSettings())
    try:
        receipt = backups.restore(src, folder, replace=replace)
    except backups.BackupError as exc:
        console.print(f"[red]{exc}[/]", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    console.print(f"restored {src} into {folder}: {len(receipt.graphs)} graphs, {receipt.keys} keys; "
                  "start it with `relay up`", highlight=False, soft_wrap=True)


admin_app = typer.Typer(help="An operator's work on one tenant's graph, straight on FalkorDB (RELAY_FALKORDB_* "
                        "settings; without RELAY_FALKORDB_PASSWORD, the one `relay up` keeps in "
                        "RELAY_DATA_DIR): snapshots, reset, delete, forget, stats, retention.", no_args_is_help=True)
app.add_typer(admin_app, name="admin")


def _admin(work, *, confirm_for: str | None = None, confirm: Optional[str] = None) -> None:
    """Runs `work(client)` with a GraphClient and prints its result as JSON. Where `confirm_for`
    names a tenant, the tenant id must be typed (or given with --confirm) first."""
    import asyncio
    import json

    from relay_graph.runtime.db import GraphClient
    from relay_graph.runtime.errors import RelayError
    from services.gateway import tenant_stores  # noqa: F401 (the gateway's per-tenant stores: what a delete or move removes)

    if confirm_for is not None and confirm is None:
        confirm = typer.prompt(f"type the tenant id ({confirm_for}) to go ahead", default="", show_default=False)

    async def go():
        client = GraphClient(_graph_settings())
        try:
            return await work(client, confirm)
        finally:
            await client.close()

    try:
        result = asyncio.run(go())
    except RelayError as exc:
        typer.echo(json.dumps({"error": {"code": exc.code, "message": exc.message}}), err=True)
        raise typer.Exit(1)
    dump = result.model_dump() if hasattr(result, "model_dump") else (
        [r.model_dump() for r in result] if isinstance(result, list) and result and hasattr(result[0], "model_dump")
        else result)
    typer.echo(json.dumps(dump, indent=2, default=str))


@admin_app.command("snapshot")
def admin_snapshot(tenant: str, name: str) -> None:
    """Copy the tenant's graph as snapshot NAME (GRAPH.COPY)."""
    from relay_graph.usecases import operations as ops

    _admin(lambda c, _: ops.create_snapshot(c, tenant, name))


@admin_app.command("snapshots")
def admin_snapshots(tenant: str) -> None:
    """List the tenant's snapshots."""
    from relay_graph.usecases import operations as ops

    _admin(lambda c, _: ops.list_snapshots(c, tenant))


@admin_app.command("restore")
def admin_restore(tenant: str, name: str) -> None:
    """Replace the tenant's graph by a copy of snapshot NAME."""
    from relay_graph.usecases import operations as ops

    _admin(lambda c, _: ops.restore_snapshot(c, tenant, name))


@admin_app.command("reset")
def admin_reset(tenant: str, confirm: Optional[str] = typer.Option(None, "--confirm", help="the tenant id again")) -> None:
    """Empty the tenant's graph after a pre-reset snapshot (asks for the tenant id)."""
    from relay_graph.usecases import operations as ops

    _admin(lambda c, ok: ops.reset_tenant(c, tenant, ok), confirm_for=tenant, confirm=confirm)


@app.command("move-tenant")
def move_tenant(
    tenant: str,
    to: str = typer.Option(..., "--to", help="the target: host:port of one server, or a cluster's seeds "
                           "host:port,host:port,... with --cluster"),
    to_cluster: bool = typer.Option(False, "--cluster", help="the target is a FalkorDB cluster"),
    keep_source: bool = typer.Option(False, "--keep-source", help="copy only; leave the tenant at the source"),
    confirm: Optional[str] = typer.Option(None, "--confirm", help="the tenant id again"),
) -> None:
    """Move a tenant (graph, snapshots, API and agent keys, limits) from this deployment (the
    RELAY_FALKORDB_* settings) to another; the target's password is RELAY_TO_FALKORDB_PASSWORD (or
    the source's). Stop what writes to the tenant first."""
    from relay_graph.usecases import operations as ops
    from relay_graph.runtime.cluster import parse_seeds
    from relay_graph.runtime.db import GraphClient

    try:
        seeds = parse_seeds(to)
    except ValueError as exc:
        console.print(f"[red]{exc}[/]", highlight=False)
        raise typer.Exit(2)
    if not seeds or (len(seeds) > 1 and not to_cluster):
        console.print("[red]--to takes one host:port (or, with --cluster, a cluster's seeds)[/]", highlight=False)
        raise typer.Exit(2)
    source = _graph_settings()
    where = {"falkordb_cluster": to} if to_cluster else {"falkordb_cluster": "", "falkordb_host": seeds[0][0],
                                                       "falkordb_port": seeds[0][1]}
    where["falkordb_password"] = os.environ.get("RELAY_TO_FALKORDB_PASSWORD") or source.falkordb_password

    async def work(client, ok):
        target = GraphClient(source.model_copy(update=where))
        try:
            return await ops.move_tenant(client, target, tenant, ok, keep_source=keep_source)
        finally:
            await target.close()

    _admin(work, confirm_for=tenant, confirm=confirm)


@admin_app.command("delete")
def admin_delete(tenant: str, confirm: Optional[str] = typer.Option(None, "--confirm", help="the tenant id again"),
                 keep_snapshots: bool = typer.Option(False, "--keep-snapshots",
                                                     help="keep its snapshots (restored only by an explicit restore)")
                 ) -> None:
    """Delete the tenant and everything kept for it: graph, snapshots (unless --keep-snapshots), keys,
    sessions, site, limits, logs (asks for the tenant id)."""
    from relay_graph.usecases import operations as ops

    async def work(c, ok):
        done = await ops.delete_tenant(c, tenant, ok, keep_snapshots=keep_snapshots)
        return {"removed_keys": done.removed, "api_key_revoked": done.registered, "kept": done.kept}

    _admin(work, confirm_for=tenant, confirm=confirm)


@admin_app.command("forget")
def admin_forget(tenant: str, customer: str) -> None:
    """Remove every episode, fact, ticket and edge about CUSTOMER; prints the receipt."""
    from relay_graph.usecases import operations as ops

    _admin(lambda c, _: ops.forget_customer(c, tenant, customer))


@admin_app.command("stats")
def admin_stats(tenant: str) -> None:
    """Counts by label and type, GRAPH.MEMORY USAGE and the GRAPH.SLOWLOG of the tenant's graph."""
    from relay_graph.usecases import operations as ops

    _admin(lambda c, _: ops.graph_stats(c, tenant))


@admin_app.command("retention")
def admin_retention(
    tenant: str,
    days: Optional[int] = typer.Option(None, "--days", help="keep this many days of episodes"),
    off: bool = typer.Option(False, "--off", help="keep every episode (the default)"),
) -> None:
    """Show or set the tenant's retention: episodes older than --days are compacted by netops
    (their facts stay, with a summary of their source)."""
    from relay_graph.memory import retention

    async def work(c, _):
        if off:
            await retention.set_retention(c, tenant, None)
        elif days is not None:
            await retention.set_retention(c, tenant, days)
        return {"tenant": tenant, "retention_days": await retention.get_retention(c, tenant)}

    _admin(work)


@admin_app.command("compact")
def admin_compact(tenant: str) -> None:
    """Compact the tenant's episodes older than its retention now; prints the receipt."""
    from relay_graph.memory import retention

    _admin(lambda c, _: retention.compact(c, tenant))


@admin_app.command("migrate-names")
def admin_migrate_names(tenant: str) -> None:
    """Move the tenant's names keyed by an older name rule to the keys of now (every process does
    this once by itself; this looks again even when it is recorded as done); prints what moved and
    what was left unmerged for a person to settle."""
    from relay_graph.memory import name_migration

    _admin(lambda c, _: name_migration.migrate_tenant(c, tenant))


@admin_app.command("merge-name-twins")
def admin_merge_name_twins(tenant: str) -> None:
    """Merge into each customer the entity that writes by the customer's exact name made beside
    them before such writes landed on the customer (every process does this once by itself; this
    looks again even when it is recorded as done); prints what merged and what was left, and why,
    for a person to settle."""
    import relay_graph.desk.vocabulary  # noqa: F401 (how many values each built-in predicate holds)
    from relay_graph.memory import name_twins

    _admin(lambda c, _: name_twins.migrate_tenant(c, tenant))


@admin_app.command("communities")
def admin_communities(tenant: str) -> None:
    """Compute the tenant's entity communities again now (algo.labelPropagation; recall ranks by
    them, and netops refreshes them every RELAY_COMMUNITIES_EVERY_S); prints the receipt."""
    from relay_graph.memory import entity_graph

    _admin(lambda c, _: entity_graph.detect_communities(c, tenant))


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


if __name__ == "__main__":
    app()
