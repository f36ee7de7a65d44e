"""The simulator: simulated customers with hidden life events who use Relay's desk through the
gateway's public HTTP API, like any other client (never a back door into the graph), and the demo
story that `make up` plays.

    world.py        who the customers can be: names, cities, plans, routers, fault kinds
    phrasings.py    what they say: templates with variation, each with what it means
    storylines.py   plan_storylines(seed, customers, days): their lives, planned from a seed
    clock.py        simulated hours onto wall seconds (1/2 to 8 simulated hours per second; the
                    console may change the speed or stop the clock while it runs)
    client.py       the gateway's HTTP API (httpx)
    faults.py       planting faults through the API, behind a small FaultInjector interface
    player.py       playing storylines: releasing events on time, reacting to the desk
    service.py      the long-running service (`python -m services.simulator`), following the
                    console's control (GET/PUT /v1/console/tenants/{t}/simulator[/status])
    demo.py         the demo story (`relay demo`, `python -m services.simulator.demo`)
"""
