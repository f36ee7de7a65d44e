"""Which environment variables a service's settings class reads (for the compose and `relay up`
checks). A service without its settings module makes the calling test fail, never skip."""

from __future__ import annotations

import importlib

import pytest
from pydantic import AliasChoices
from pydantic_settings import BaseSettings


def settings_class(service: str) -> type[BaseSettings]:
    module_name = f"services.{service}.settings"
    try:
        module = importlib.import_module(module_name)
        missing = False
    except ModuleNotFoundError as exc:
        if exc.name not in (module_name, f"services.{service}", "services"):
            raise
        missing = True
    if missing:
        pytest.fail(
            f"{module_name} does not exist: services/{service}/settings.py must define the "
            f"{service} process's pydantic-settings class (env prefix RELAY_), so the variables that "
            f"docker-compose.yml and `relay up` give it can be checked against its fields",
            pytrace=False,
        )
    found = [
        c for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, BaseSettings) and c.__module__ == module_name
    ]
    if len(found) != 1:
        pytest.fail(
            f"{module_name} should define exactly one pydantic-settings class, found "
            f"{[c.__name__ for c in found] or 'none'}",
            pytrace=False,
        )
    return found[0]


def env_names(cls: type[BaseSettings]) -> set[str]:
    """Upper-cased variable names the class reads (prefix + field name, or its aliases)."""
    prefix = cls.model_config.get("env_prefix", "") or ""
    names: set[str] = set()
    for name, field in cls.model_fields.items():
        alias = field.validation_alias or field.alias
        if isinstance(alias, str):
            names.add(alias.upper())
        elif isinstance(alias, AliasChoices):
            names |= {a.upper() for a in alias.choices if isinstance(a, str)}
        else:
            names.add(f"{prefix}{name}".upper())
    return names


def assert_reads(service: str, given: set[str], where: str) -> None:
    cls = settings_class(service)
    unknown = sorted(n for n in given if n.upper() not in env_names(cls))
    assert not unknown, (
        f"{where} gives {service} {unknown}, but {cls.__module__}.{cls.__name__} has no such field, "
        f"so the value would be silently ignored. Add the field or stop passing the variable."
    )
