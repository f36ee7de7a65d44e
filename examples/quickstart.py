"""Two agents share one memory; a person settles where they disagree.

    RELAY_URL=http://127.0.0.1:8000 RELAY_ADMIN_KEY=... python examples/quickstart.py
"""

import uuid

from relay_client import Admin

admin = Admin()  # RELAY_URL and RELAY_ADMIN_KEY from the environment
tenant = f"quickstart-{uuid.uuid4().hex[:6]}"
team = admin.tenant(tenant, admin.create_tenant(tenant).api_key)  # a memory-only tenant
planner = admin.tenant(tenant, team.create_agent("planner").api_key)
crm = admin.tenant(tenant, team.create_agent("crm-bot").api_key)

planner.remember_turn("call-1", "Asha", "We moved to Pune last month, the flat near the river.", at="2026-03-02T10:00:00+00:00")
print(planner.remember("asha rao", "lives_in", "pune", valid_from="2026-02-01T00:00:00+00:00").outcome)  # created

hit = crm.recall("where is Asha's new flat?").items[0]  # the other agent finds it, with the path
print(hit.speaker, "said:", hit.text, "| via", " > ".join(hit.path))

disagree = crm.remember("asha rao", "lives_in", "mumbai")  # crm-bot heard otherwise
print(disagree.outcome, [(c.object, c.asserted_by, round(c.trust, 2)) for c in crm.claims("asha rao", "lives_in").claims])

team.settle(disagree.conflict_id, disagree.fact_id, by="maya")  # a person decides; trust moves
print([(f.object, f.asserted_by) for f in planner.facts("asha rao", "lives_in").facts])  # [('mumbai', 'crm-bot')]
admin.delete_tenant(tenant)
