"""The provider's world in a tenant: seeding a region (catalogue and access network) and connecting
customers' homes to it. A tenant is created with its region's world (POST /v1/tenants, unless it
asks for an empty one); `POST /world` seeds it (again harmlessly; another seed is refused, never
regenerated) and connects customers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from relay_graph.memory.inputs import Name

from relay_graph.usecases import customers, world
from relay_graph.memory import names

from ..deps import CallDep, TenantDep, TenantKeyDep
from ..errors import responses
from ..schemas import Answer, HomeBody, HomeLine, WorldBody, WorldSummary

router = APIRouter(prefix="/v1/tenants/{t}", tags=["world"])


@router.post("/world", response_model=Answer[WorldSummary], responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Seed a region's catalogue and access network, and connect customers",
             description="Seeds the region's catalogue (countries, served cities and areas, plans priced per "
             "country, FAQs, playbooks) and generates its access network over every served city and area "
             "(core -> city hub -> exchange -> street cabinet) once: calling it again writes nothing new "
             "(`nodes_created` 0), and a call naming another `seed` or `max_cities` than the first is refused "
             "with 409 `world_seeded` (another seed would rewire the live network). Each of `customers` is connected to a new home box on a street cabinet "
             "of the area their address names (the city's central exchange when it names only the city). "
             "This writes network state only; what customers say about themselves is the desk agents' to "
             "file. Every address is placed before anything is written: 422 `unknown_region`, "
             "`ambiguous_address`, `no_line_there` or `unknown_place` and nothing changes. The tenant's own "
             "key only (an agent key: 403 `tenant_key_required`).")
async def seed_world(body: WorldBody, tenant: TenantKeyDep, call: CallDep) -> WorldSummary:
    return await world.seed_world(call, body.region, seed=body.seed, max_cities=body.max_cities,
                                  customers=[(c.customer, c.address) for c in body.customers])


@router.post("/customers/{c}/line", response_model=Answer[HomeLine], responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Connect a customer's home to the network, from their address",
             description="Places the address (own list of served areas, then the offline gazetteer) and installs "
             "a home box on a cabinet of that area's exchange (moving the customer if they had a line "
             "elsewhere). The same customer and address again changes nothing. 422 `ambiguous_address`, "
             "`no_line_there`, `unknown_place`; 404 `no_network_there` when the region's world is not seeded.")
async def connect_home(
    body: HomeBody,
    tenant: TenantDep,
    call: CallDep,
    customer: Annotated[Name, Path(alias="c", examples=["ravi nair"])],
) -> HomeLine:
    customer = await names.subject_for_write(call.client, tenant, customer)  # a customer's exact name: them
    return await customers.connect_home(call, customer, body.address, region=body.region)
