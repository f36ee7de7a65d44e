"""Frequently asked questions, seeded as `(:Faq {faq_id, topic, question, answer, keywords})` and
found by full-text search. `keywords` holds the words customers use that the text does not
("wifi" for "Wi-Fi", "refund" for a double charge). Answers never quote a price or a plan's speed:
those are read from the priced catalogue for the customer's country."""

from __future__ import annotations

from dataclasses import dataclass

from relay_graph.desk.catalogue.brand import APP_NAME, BRAND_NAME, STATUS_PAGE, SUPPORT_EMAIL


@dataclass(frozen=True)
class FaqSpec:
    faq_id: str
    topic: str
    question: str
    answer: str
    keywords: str = ""


FAQS: tuple[FaqSpec, ...] = (
    FaqSpec("wifi-password", "wifi", "How do I change my Wi-Fi name or password?",
            f"Open the {APP_NAME}, choose Wi-Fi, then Name and password. Devices will need the new password "
            "to reconnect.",
            keywords="wifi password ssid network name change"),
    FaqSpec("slow-wifi", "wifi", "Why is my Wi-Fi slow in some rooms?",
            "Walls, floors and neighbouring networks weaken Wi-Fi. Put the router in the open, away from "
            "microwaves, or add mesh points; a cable gives the full speed of your plan.",
            keywords="wifi weak signal rooms coverage mesh slow"),
    FaqSpec("speed-test", "speed", "How do I test my internet speed properly?",
            "Connect a computer to the router with a cable, close other apps and run the speed test in the "
            f"{APP_NAME}. Wi-Fi tests measure the Wi-Fi, not the fibre line.",
            keywords="speed test slow mbps measure"),
    FaqSpec("outage-check", "outage", "How do I know if there is an outage in my area?",
            f"Check {STATUS_PAGE} or the {APP_NAME}. We also message customers in an affected area before "
            "they call us.",
            keywords="outage down status area broken"),
    FaqSpec("red-light", "equipment", "What does a red light on my fibre box mean?",
            "A red LOS light means the box sees no light from the fibre. Check that the green fibre cable is "
            "clicked in and not bent, then contact us: it usually needs a line test or a technician.",
            keywords="red light los blinking fibre fiber box ont signal"),
    FaqSpec("restart-router", "equipment", "How do I restart my router safely?",
            "Switch the router off at the plug, wait thirty seconds, and switch it on again. It takes about two "
            "minutes to reconnect. Please do not press the reset pin: that erases your settings.",
            keywords="restart reboot router reset turn off"),
    FaqSpec("installation-time", "installation", "How long does installation take?",
            "A standard installation takes two to four hours. The technician brings the fibre in, fits the box "
            "and sets up your Wi-Fi.",
            keywords="installation install technician appointment how long"),
    FaqSpec("moving-home", "moving", "I am moving home. Can I take my connection with me?",
            "Yes, if we serve your new address. Tell us the new address and the moving date and we book the "
            "move of your line; your plan and add-ons move with you.",
            keywords="move moving relocate relocation new address house"),
    FaqSpec("bill-date", "billing", "When is my bill charged?",
            "Your plan is billed monthly in advance on the date your service started. One-off services are "
            "billed with the next bill.",
            keywords="bill billing date charged monthly invoice"),
    FaqSpec("double-charge", "billing", "I was charged twice. What should I do?",
            "Tell us the date and amount of both charges. We check the payments and refund a duplicate to the "
            "same card, usually within five working days.",
            keywords="charged twice double charge duplicate refund billing"),
    FaqSpec("payment-failed", "billing", "My payment failed. Will my service be cut off?",
            "No, not straight away. Update your card in the app or pay the open bill; we retry a failed payment "
            "and remind you before anything changes.",
            keywords="payment failed declined card cut off disconnected"),
    FaqSpec("change-plan", "plans", "How do I upgrade or change my plan?",
            f"Choose a new plan in the {APP_NAME} or ask the desk. An upgrade starts within minutes; a downgrade "
            "starts with the next billing month.",
            keywords="upgrade downgrade change plan faster speed"),
    FaqSpec("static-ip", "addons", "Can I get a static IP address?",
            "Yes, as an add-on. It gives your line a fixed public IPv4 address for cameras, servers or VPNs.",
            keywords="static ip fixed address public ipv4 addon"),
    FaqSpec("own-router", "equipment", "Can I use my own router?",
            "Yes. Connect it to the fibre box's LAN port. We can only check and restart the routers we supply "
            "remotely, so keep ours at hand if you need help.",
            keywords="own router bring byo third party"),
    FaqSpec("contact", "support", f"How do I contact {BRAND_NAME} support?",
            f"Chat with the desk in the {APP_NAME} at any time, or write to {SUPPORT_EMAIL}.",
            keywords="contact support phone email help chat"),
    FaqSpec("coverage", "coverage", "Do you offer fibre at my address?",
            "Tell us your city and neighbourhood: we check it against the areas where we have lines and tell "
            "you straight away.",
            keywords="coverage available availability address serve fibre fiber city"),
)

__all__ = ["FAQS", "FaqSpec"]
