"""The provider's catalogue: regions, countries, served cities and areas, priced offers, router
models, FAQs and playbooks. Seeding is batched (one UNWIND per kind) and idempotent (MERGE on
each node's key); reads start from an indexed node (Country.code, Playbook.issue_kind,
CatalogueSeed.region) or a full-text index.

Prices live on the edge `(:Offer)-[:PRICED_IN {currency, amount, tax_rate, tax_amount,
price_incl_tax, period, display, display_incl_tax}]->(:Country)`: one price per offer and country,
read from the country outwards. Plans are `Entity:Plan:Offer`, add-ons `Addon:Offer`, services
`Service:Offer`, routers `Entity:Router` (catalogue = true), cities `Entity:City`."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

# ---------------------------------------------------------------- seed marker

SEED_MARKER = Query(
    "catalogue_seed_marker",
    "MATCH (m:CatalogueSeed {region: $region}) RETURN m.version AS version",
    read_only=True,
)

SEED_MARKERS = Query(
    "catalogue_seed_markers",
    "MATCH (m:CatalogueSeed) RETURN m.region AS region, m.version AS version, m.seeded_at_ms AS seeded_at_ms "
    "ORDER BY region",
    read_only=True,
)

MARK_SEEDED = Query(
    "catalogue_mark_seeded",
    """MERGE (m:CatalogueSeed {region: $region})
SET m.version = $version, m.seeded_at_ms = $now_ms
RETURN m.version AS version""",
)

# ---------------------------------------------------------------- places

UPSERT_REGION = Query(
    "catalogue_upsert_region",
    """MERGE (r:Region {code: $code})
SET r.name = $name, r.desk = $desk
RETURN r.code AS code""",
)

UPSERT_COUNTRIES = Query(
    "catalogue_upsert_countries",
    """MATCH (r:Region {code: $region})
UNWIND $rows AS row
MERGE (c:Country {code: row.code})
SET c.name = row.name, c.currency = row.currency, c.tax_rate = row.tax_rate, c.price_level = row.price_level,
    c.region = $region
MERGE (c)-[:IN_REGION]->(r)
RETURN count(c) AS n""",
)

# A city may already exist as the object of a lives_in fact: MERGE on its entity uid keeps it one node.
UPSERT_CITIES = Query(
    "catalogue_upsert_cities",
    """UNWIND $rows AS row
MATCH (k:Country {code: row.country})
MERGE (c:Entity {uid: row.uid})
  ON CREATE SET c.type = 'City', c.name_key = row.name_key
SET c:City, c.name = row.name, c.aliases = row.aliases, c.country = row.country, c.region = row.region,
    c.admin1 = row.admin1, c.lat = row.lat, c.lon = row.lon, c.population = row.population,
    c.geonameid = row.geonameid, c.served = true
MERGE (c)-[:IN_COUNTRY]->(k)
RETURN count(c) AS n""",
)

UPSERT_AREAS = Query(
    "catalogue_upsert_areas",
    """UNWIND $rows AS row
MATCH (c:Entity {uid: row.city_uid})
MERGE (a:Area {uid: row.uid})
SET a.name = row.name, a.name_key = row.name_key, a.aliases = row.aliases, a.kind = row.kind,
    a.lat = row.lat, a.lon = row.lon, a.geonameid = row.geonameid, a.population = row.population,
    a.city_uid = row.city_uid
MERGE (a)-[:IN_CITY]->(c)
RETURN count(a) AS n""",
)

# ---------------------------------------------------------------- offers

UPSERT_PLANS = Query(
    "catalogue_upsert_plans",
    """UNWIND $rows AS row
MERGE (p:Entity {uid: row.uid})
  ON CREATE SET p.type = 'Plan', p.name_key = row.name_key
SET p:Plan:Offer, p.offer_id = row.offer_id, p.kind = 'plan', p.name = row.name, p.down_mbps = row.down_mbps,
    p.up_mbps = row.up_mbps, p.description = row.description, p.base_usd = row.base_usd, p.rank = row.rank
RETURN count(p) AS n""",
)

UPSERT_ADDONS = Query(
    "catalogue_upsert_addons",
    """UNWIND $rows AS row
MERGE (o:Offer {offer_id: row.offer_id})
SET o:Addon, o.kind = 'addon', o.name = row.name, o.description = row.description, o.base_usd = row.base_usd,
    o.period = row.period, o.rank = row.rank
RETURN count(o) AS n""",
)

UPSERT_SERVICES = Query(
    "catalogue_upsert_services",
    """UNWIND $rows AS row
MERGE (o:Offer {offer_id: row.offer_id})
SET o:Service, o.kind = 'service', o.name = row.name, o.description = row.description,
    o.base_usd = row.base_usd, o.period = row.period, o.rank = row.rank
RETURN count(o) AS n""",
)

UPSERT_PRICES = Query(
    "catalogue_upsert_prices",
    """UNWIND $rows AS row
MATCH (c:Country {code: row.country})
MATCH (o:Offer {offer_id: row.offer_id})
MERGE (o)-[e:PRICED_IN]->(c)
SET e.currency = row.currency, e.amount = row.amount, e.tax_rate = row.tax_rate, e.tax_amount = row.tax_amount,
    e.price_incl_tax = row.price_incl_tax, e.period = row.period, e.display = row.display,
    e.display_incl_tax = row.display_incl_tax
RETURN count(e) AS n""",
)

UPSERT_ROUTERS = Query(
    "catalogue_upsert_routers",
    """UNWIND $rows AS row
MERGE (r:Entity {uid: row.uid})
  ON CREATE SET r.type = 'Router', r.name_key = row.name_key
SET r:Router, r.name = row.name, r.maker = row.maker, r.wifi = row.wifi, r.supplied = row.supplied,
    r.catalogue = true
RETURN count(r) AS n""",
)

# ---------------------------------------------------------------- FAQs and playbooks

UPSERT_FAQS = Query(
    "catalogue_upsert_faqs",
    """UNWIND $rows AS row
MERGE (f:Faq {faq_id: row.faq_id})
SET f.topic = row.topic, f.question = row.question, f.answer = row.answer, f.keywords = row.keywords
RETURN count(f) AS n""",
)

UPSERT_PLAYBOOKS = Query(
    "catalogue_upsert_playbooks",
    """UNWIND $rows AS row
MERGE (p:Playbook {issue_kind: row.issue_kind})
SET p.title = row.title, p.steps = row.steps
RETURN count(p) AS n""",
)

# Steps are keyed "<issue_kind>#<order>", so re-seeding rewrites them in place; the edges are
# MERGEd between fixed keys, and steps past a shortened playbook's end are removed.
UPSERT_PLAYBOOK_STEPS = Query(
    "catalogue_upsert_playbook_steps",
    """UNWIND $rows AS row
MERGE (s:PlaybookStep {step_id: row.step_id})
SET s.issue_kind = row.issue_kind, s.order = row.order, s.action = row.action, s.instruction = row.instruction
RETURN count(s) AS n""",
)

LINK_PLAYBOOK_FIRST = Query(
    "catalogue_link_playbook_first",
    """UNWIND $rows AS row
MATCH (p:Playbook {issue_kind: row.issue_kind})
MATCH (s:PlaybookStep {step_id: row.step_id})
MERGE (p)-[:FIRST]->(s)
RETURN count(s) AS n""",
)

LINK_PLAYBOOK_NEXT = Query(
    "catalogue_link_playbook_next",
    """UNWIND $rows AS row
MATCH (a:PlaybookStep {step_id: row.source})
MATCH (b:PlaybookStep {step_id: row.target})
MERGE (a)-[:NEXT]->(b)
RETURN count(b) AS n""",
)

TRIM_PLAYBOOK_STEPS = Query(
    "catalogue_trim_playbook_steps",
    """UNWIND $rows AS row
MATCH (s:PlaybookStep {issue_kind: row.issue_kind})
WHERE s.order > row.steps
DETACH DELETE s
RETURN count(s) AS n""",
)

# ---------------------------------------------------------------- reads

PLANS_FOR = Query(
    "catalogue_plans_for",
    """MATCH (c:Country {code: $country})<-[e:PRICED_IN]-(p:Plan)
RETURN p.offer_id AS offer_id, p.uid AS uid, p.name AS name, p.down_mbps AS down_mbps, p.up_mbps AS up_mbps,
       p.description AS description, c.code AS country, e AS price,
       relay.money(e.amount, e.currency) AS display, relay.money(e.price_incl_tax, e.currency) AS display_incl_tax
ORDER BY p.rank""",
    read_only=True,
)

ADDONS_FOR = Query(
    "catalogue_addons_for",
    """MATCH (c:Country {code: $country})<-[e:PRICED_IN]-(o:Addon)
RETURN o.offer_id AS offer_id, o.kind AS kind, o.name AS name, o.description AS description, c.code AS country,
       e AS price,
       relay.money(e.amount, e.currency) AS display, relay.money(e.price_incl_tax, e.currency) AS display_incl_tax
ORDER BY o.rank""",
    read_only=True,
)

SERVICES_FOR = Query(
    "catalogue_services_for",
    """MATCH (c:Country {code: $country})<-[e:PRICED_IN]-(o:Service)
RETURN o.offer_id AS offer_id, o.kind AS kind, o.name AS name, o.description AS description, c.code AS country,
       e AS price,
       relay.money(e.amount, e.currency) AS display, relay.money(e.price_incl_tax, e.currency) AS display_incl_tax
ORDER BY o.rank""",
    read_only=True,
)

COUNTRY_EXISTS = Query(
    "catalogue_country_exists",
    "MATCH (c:Country {code: $country}) RETURN c.code AS code",
    read_only=True,
)

FAQ_SEARCH = Query(
    "catalogue_faq_search",
    """CALL db.idx.fulltext.queryNodes('Faq', $q) YIELD node, score
RETURN node.faq_id AS faq_id, node.topic AS topic, node.question AS question, node.answer AS answer,
       node.keywords AS keywords, score
ORDER BY score DESC, faq_id
LIMIT $limit""",
    read_only=True,
)

PLAYBOOK_STEPS = Query(
    "catalogue_playbook_steps",
    """MATCH (p:Playbook {issue_kind: $issue_kind})-[:FIRST]->(first:PlaybookStep)
MATCH (first)-[:NEXT*0..]->(s:PlaybookStep)
RETURN DISTINCT s.order AS order, s.action AS action, s.instruction AS instruction
ORDER BY order""",
    read_only=True,
)

# The names the intake extractor matches: served cities (from the regions seeded here), plans,
# and catalogue router models.
EXTRACTION_NAMES = Query(
    "catalogue_extraction_names",
    """MATCH (:Region)<-[:IN_REGION]-(:Country)<-[:IN_COUNTRY]-(c:City)
RETURN 'city' AS kind, c.name AS name
UNION ALL
MATCH (p:Plan:Offer)
RETURN 'plan' AS kind, p.name AS name
UNION ALL
MATCH (r:Router)
WHERE r.catalogue = true
RETURN 'router' AS kind, r.name AS name""",
    read_only=True,
)

# Every served city with its areas: the own list placement matches first.
SERVED_PLACES = Query(
    "catalogue_served_places",
    """MATCH (r:Region)<-[:IN_REGION]-(k:Country)<-[:IN_COUNTRY]-(c:City)
OPTIONAL MATCH (a:Area)-[:IN_CITY]->(c)
RETURN c.uid AS uid, c.name AS name, c.aliases AS aliases, k.code AS country, r.code AS region, c.lat AS lat,
       c.lon AS lon, c.geonameid AS geonameid,
       collect({name: a.name, aliases: a.aliases, lat: a.lat, lon: a.lon, geonameid: a.geonameid}) AS areas""",
    read_only=True,
)
