"""Customers by name: the read "find customers called ..."."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from relay_graph.desk.customers import store as customers

from ..deps import MemoryDep, TenantDep
from ..errors import responses
from ..schemas import Answer

router = APIRouter(prefix="/v1/tenants/{t}", tags=["customers"])

DESCRIPTION = """Customers are ids; a name is a fact about a customer, and two customers may share
one. This read finds the customers whose current name (or, for an older tenant's customers, whose
id) is exactly `name`, case, spacing and punctuation aside: all of them. When none is, the
customers of the one name on file spelt alike are answered, with `matched` saying which name;
when two or more different names are that close, nothing is picked: `ambiguous` lists them
("did you mean asha rao or isha rao?")."""


@router.get("/customers", response_model=Answer[customers.CustomersAnswer], responses=responses(401, 403, 422, 429, 503),
            summary="Find customers called ...", description=DESCRIPTION)
async def find_customers(
    tenant: TenantDep,
    memory: MemoryDep,
    name: Annotated[str, Query(min_length=1, max_length=200, examples=["Priya Raman"])],
) -> customers.CustomersAnswer:
    return await customers.find(memory.client, tenant, name)
