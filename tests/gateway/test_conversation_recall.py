"""An open-domain conversation loaded and recalled through the HTTP contract alone, as an outside
benchmark would: turns with its own ids ("D1:3"), recall with only `q` and `k`."""

from __future__ import annotations


SESSION_1 = "2023-05-08T13:56:00+00:00"
SESSION_2 = "2023-06-27T10:12:00+00:00"
TURNS = [
    {"id": "D1:1", "session": "session_1", "speaker": "Caroline", "text": "Hey Mel! Good to see you!", "at": SESSION_1},
    {"id": "D1:2", "session": "session_1", "speaker": "Melanie", "text": "Hi Caroline! How have you been?",
     "at": SESSION_1},
    {"id": "D1:3", "session": "session_1", "speaker": "Caroline",
     "text": "I went to a LGBTQ support group yesterday and it was so powerful.", "at": SESSION_1},
    {"id": "D1:4", "session": "session_1", "speaker": "Melanie", "text": "That's great! What happened there?",
     "at": SESSION_1},
    {"id": "D2:1", "session": "session_2", "speaker": "Melanie",
     "text": "I painted a lake sunrise last week, my kids loved it.", "at": SESSION_2},
    {"id": "D2:2", "session": "session_2", "speaker": "Caroline", "text": "Wow, you should frame it!", "at": SESSION_2},
]


async def test_client_ids_round_trip_with_only_q_and_k(client, tenant, auth):
    base = f"/v1/tenants/{tenant}"
    r = await client.post(f"{base}/episodes", json={"episodes": TURNS}, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["episode_ids"] == [t["id"] for t in TURNS]

    r = await client.get(f"{base}/recall", params={"q": "When did Caroline go to the LGBTQ support group?", "k": 10},
                         headers=auth)
    assert r.status_code == 200, r.text
    body = r.json()
    items = body["items"]
    assert items[0]["episode_id"] == "D1:3"
    assert items[0]["speaker"] == "Caroline" and items[0]["session"] == "session_1"
    assert items[0]["at"] == SESSION_1
    assert {i["episode_id"] for i in items} <= {t["id"] for t in TURNS}
    assert body["shape"] == "path"  # a named speaker connected the question to her turn

    r = await client.get(f"{base}/recall", params={"q": "What did Melanie paint in June 2023?", "k": 2}, headers=auth)
    assert r.status_code == 200
    assert [i["episode_id"] for i in r.json()["items"]][0] == "D2:1"
