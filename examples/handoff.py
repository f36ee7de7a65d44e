"""One agent learns something and hands the follow-up to another, which claims it and reads what
the first one learnt. The agents never message each other: the task and the facts are graph state.

    RELAY_URL=http://127.0.0.1:8000 RELAY_ADMIN_KEY=... python examples/handoff.py
"""

import uuid

from relay_client import Admin

admin = Admin()
tenant = f"handoff-{uuid.uuid4().hex[:6]}"
team = admin.tenant(tenant, admin.create_tenant(tenant).api_key)
planner = admin.tenant(tenant, team.create_agent("planner").api_key)
crm = admin.tenant(tenant, team.create_agent("crm-bot").api_key)

planner.remember("ravi kumar", "prefers_contact", "email")  # what the planner learnt
task = planner.open_task("send Ravi the renewal offer", about="ravi kumar", for_agent="crm-bot")
print("planner opened", task.task_id, "for", task.waiting_for)

# two copies of the CRM bot race for the same task: exactly one wins
wins = [crm.claim(task.task_id, replica=f"crm-{i}").won for i in range(2)]
print("claims won:", wins.count(True), "of", len(wins))

how = crm.facts(task.about, "prefers_contact").facts[0]  # read what the planner wrote
print(f"crm-bot reads: contact {task.about} by {how.object} (written by {how.asserted_by})")
crm.done(task.task_id)
print("trail:", [(s.kind, s.agent) for s in team.task(task.task_id).trail])
admin.delete_tenant(tenant)
