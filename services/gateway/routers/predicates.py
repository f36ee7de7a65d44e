"""A tenant's own vocabulary: defining, listing and retiring predicates (memory/predicates.py).

Any key of the tenant may define a predicate and list them: the tenant key and its agents' keys
(an outside agent brings its vocabulary with it, as it starts). Retiring one is the tenant key's:
it stops every agent from writing it. The admin key is not a tenant key (403)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from relay_graph.memory.predicates import PredicateDefinition, PredicateList, PredicateView
from relay_graph.memory.registry import NAME_PATTERN
from relay_graph.usecases import predicates as cases

from ..deps import CallDep, IdentityDep, MemoryDep, TenantKeyDep
from ..errors import responses

router = APIRouter(prefix="/v1/tenants/{t}/predicates", tags=["predicates"])

Name = Annotated[str, Path(pattern=NAME_PATTERN, examples=["prefers_language"],
                           description="the predicate's name: lower case letters, digits and _, starting with a "
                                       "letter, 2-48 characters; never a built-in one's")]


class PredicateBody(PredicateDefinition):
    """A predicate of the tenant's own (only `cardinality` is required)."""


@router.put("/{name}", response_model=PredicateView, responses=responses(401, 403, 409, 413, 422, 429, 503) | {
                201: {"model": PredicateView, "description": "a new predicate (or one back from retirement)"}},
            summary="Define a predicate of the tenant's own, or change its object type, conflict policy or "
                    "description (any key of the tenant)",
            description="200 when it was defined already (unchanged or changed), 201 when it is new. Its facts are "
                        "written like the built-in predicates' (`POST .../facts`). A built-in name is 409 "
                        "`builtin_predicate`; a change of `cardinality` while the predicate has facts is 409 "
                        "`cardinality_in_use` with their count (also after a DELETE); `object`, `conflict` and "
                        "`description` may change at any time and apply to later writes.")
async def define_predicate(body: PredicateBody, name: Name, call: CallDep, response: Response) -> PredicateView:
    view, created = await cases.define_predicate(call, name, body)
    response.status_code = 201 if created else 200
    return view


@router.get("", response_model=PredicateList, responses=responses(401, 403, 429, 503),
            summary="The predicates the tenant may write: the built-in ones and its own (each marked which)")
async def list_predicates(who: IdentityDep, memory: MemoryDep) -> PredicateList:
    return await memory.predicates(who.tenant)


@router.delete("/{name}", status_code=204, responses=responses(401, 403, 404, 409, 422, 429, 503),
               summary="Retire a predicate of the tenant's own (tenant key): later writes are 422 "
                       "`unknown_predicate`, its facts stay and are read as before",
               description="A `PUT` brings it back (with the cardinality it had while it has facts). A built-in "
                           "predicate is 409 `builtin_predicate`; a name the tenant never defined, 404.")
async def retire_predicate(name: Name, _: TenantKeyDep, call: CallDep) -> Response:
    await cases.retire_predicate(call, name)
    return Response(status_code=204)
