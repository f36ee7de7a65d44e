"""The small word lists the rules extractor leans on. Deliberately short and curated: the catalogue
(ExtractionContext) is the real source of city, plan and router names; these lists only make the
desk work before it exists and keep everyday words from being read as names."""

from __future__ import annotations

# Major cities of India, Europe, the Americas and Asia-Pacific, with the older or local spellings
# customers still use. Names that are also everyday English words (Nice, Reading, Mobile, Split,
# Bath) are left out on purpose.
CITIES: dict[str, tuple[str, ...]] = {
    # India
    "Mumbai": ("Bombay",), "Delhi": (), "New Delhi": (), "Bengaluru": ("Bangalore",), "Hyderabad": (),
    "Chennai": ("Madras",), "Kolkata": ("Calcutta",), "Pune": ("Poona",), "Ahmedabad": (), "Jaipur": (),
    "Surat": (), "Lucknow": (), "Kanpur": (), "Nagpur": (), "Indore": (), "Bhopal": (), "Thane": (),
    "Navi Mumbai": (), "Visakhapatnam": ("Vizag",), "Patna": (), "Vadodara": ("Baroda",), "Ghaziabad": (),
    "Ludhiana": (), "Agra": (), "Nashik": (), "Faridabad": (), "Meerut": (), "Rajkot": (), "Varanasi": (),
    "Srinagar": (), "Amritsar": (), "Chandigarh": (), "Coimbatore": (), "Kochi": ("Cochin",),
    "Thiruvananthapuram": ("Trivandrum",), "Mysuru": ("Mysore",), "Gurugram": ("Gurgaon",), "Noida": (),
    "Panaji": (), "Guwahati": (), "Bhubaneswar": (), "Dehradun": (), "Ranchi": (), "Raipur": (),
    "Jodhpur": (), "Udaipur": (), "Madurai": (), "Vijayawada": (), "Mangaluru": ("Mangalore",),
    # Europe
    "London": (), "Manchester": (), "Birmingham": (), "Leeds": (), "Glasgow": (), "Edinburgh": (),
    "Liverpool": (), "Bristol": (), "Dublin": (), "Paris": (), "Lyon": (), "Marseille": (), "Berlin": (),
    "Munich": ("München",), "Hamburg": (), "Frankfurt": (), "Cologne": ("Köln",), "Amsterdam": (),
    "Rotterdam": (), "The Hague": (), "Brussels": (), "Antwerp": (), "Madrid": (), "Barcelona": (),
    "Valencia": (), "Seville": ("Sevilla",), "Lisbon": ("Lisboa",), "Porto": (), "Rome": ("Roma",),
    "Milan": ("Milano",), "Naples": (), "Turin": (), "Florence": (), "Vienna": ("Wien",), "Zurich": (),
    "Geneva": (), "Prague": (), "Warsaw": (), "Krakow": ("Kraków",), "Budapest": (), "Bucharest": (),
    "Athens": (), "Stockholm": (), "Oslo": (), "Copenhagen": (), "Helsinki": (), "Istanbul": (),
    "Kyiv": ("Kiev",), "Sofia": (), "Belgrade": (), "Zagreb": (), "Luxembourg": (),
    # Americas
    "New York": ("NYC",), "Los Angeles": (), "Chicago": (), "Houston": (), "Phoenix": (),
    "Philadelphia": (), "San Antonio": (), "San Diego": (), "Dallas": (), "Austin": (), "San Jose": (),
    "San Francisco": (), "Seattle": (), "Boston": (), "Washington": (), "Miami": (), "Atlanta": (),
    "Denver": (), "Las Vegas": (), "Portland": (), "Detroit": (), "Toronto": (), "Montreal": (),
    "Vancouver": (), "Calgary": (), "Ottawa": (), "Mexico City": (), "Guadalajara": (), "Monterrey": (),
    "São Paulo": (), "Rio de Janeiro": (), "Brasília": (), "Buenos Aires": (), "Santiago": (), "Lima": (),
    "Bogotá": (), "Medellín": (), "Quito": (), "Montevideo": (),
    # Asia-Pacific
    "Tokyo": (), "Osaka": (), "Kyoto": (), "Seoul": (), "Busan": (), "Beijing": (), "Shanghai": (),
    "Shenzhen": (), "Guangzhou": (), "Hong Kong": (), "Taipei": (), "Singapore": (), "Kuala Lumpur": (),
    "Jakarta": (), "Bangkok": (), "Manila": (), "Ho Chi Minh City": ("Saigon",), "Hanoi": (),
    "Sydney": (), "Melbourne": (), "Brisbane": (), "Perth": (), "Adelaide": (), "Auckland": (),
    "Wellington": (), "Dhaka": (), "Karachi": (), "Lahore": (), "Colombo": (), "Kathmandu": (),
    "Dubai": (), "Abu Dhabi": (), "Doha": (), "Riyadh": (),
}

# Router makers, spelt as customers type them -> as the maker spells itself. Makers that also sell
# phones, laptops or TVs are AMBIGUOUS_BRANDS: they count as a router only next to a router word.
ROUTER_BRANDS: dict[str, str] = {
    "tp-link": "TP-Link", "tp link": "TP-Link", "tplink": "TP-Link", "netgear": "Netgear", "asus": "ASUS",
    "linksys": "Linksys", "d-link": "D-Link", "dlink": "D-Link", "tenda": "Tenda", "mercusys": "Mercusys",
    "huawei": "Huawei", "zte": "ZTE", "nokia": "Nokia", "xiaomi": "Xiaomi", "eero": "eero",
    "google nest wifi": "Google Nest Wifi", "nest wifi": "Nest Wifi", "google wifi": "Google Wifi",
    "fritz!box": "FRITZ!Box", "fritzbox": "FRITZ!Box", "fritz box": "FRITZ!Box", "avm": "AVM",
    "sagemcom": "Sagemcom", "technicolor": "Technicolor", "arris": "Arris", "motorola": "Motorola",
    "ubiquiti": "Ubiquiti", "unifi": "UniFi", "mikrotik": "MikroTik", "cisco": "Cisco", "syrotech": "Syrotech",
    "digisol": "Digisol", "cudy": "Cudy", "totolink": "TOTOLINK", "keenetic": "Keenetic", "genexis": "Genexis",
    "sercomm": "Sercomm", "alcatel": "Alcatel", "orbi": "Orbi", "deco": "Deco", "nighthawk": "Nighthawk",
    "archer": "Archer", "velop": "Velop", "zyxel": "Zyxel", "draytek": "DrayTek", "belkin": "Belkin",
    # the routers providers hand out, by the provider's name ("a JioFiber router, model JCOW414")
    "jiofiber": "JioFiber", "jio fiber": "JioFiber", "jio": "Jio", "airtel": "Airtel", "bsnl": "BSNL",
    "act fibernet": "ACT Fibernet", "hathway": "Hathway", "excitel": "Excitel", "netlink": "Netlink",
    "bt smart hub": "BT Smart Hub", "sky hub": "Sky Hub", "virgin hub": "Virgin Hub", "speedport": "Speedport",
    "livebox": "Livebox", "freebox": "Freebox", "vodafone station": "Vodafone Station",
}
AMBIGUOUS_BRANDS = {"jio", "airtel", "bsnl", "hathway", "excitel", "huawei", "nokia", "xiaomi", "motorola", "asus", "alcatel", "cisco", "belkin",
                    "google wifi", "deco", "archer", "avm"}

# Words that continue a router model name even in lower case ("archer c6", "rt ax55 pro").
MODEL_WORDS = {"archer", "deco", "nighthawk", "orbi", "velop", "zenwifi", "rog", "rapture", "pro", "plus",
               "max", "mini", "ultra", "mesh", "hub", "box", "wifi", "smart", "home", "gateway", "ax", "ac",
               "rt", "gt", "xe", "be", "lite", "nova", "wave", "station"}

ROUTER_WORDS = r"(?:wi-?fi\s+)?(?:router|modem|ont|onu|gateway|access\s+point|mesh(?:\s+system)?|extender|repeater)"

# surface form -> the device as we file it. Longer forms are tried first.
DEVICES: dict[str, str] = {
    "smart tv": "tv", "television": "tv", "telly": "tv", "tv": "tv",
    "apple tv": "apple tv", "fire tv stick": "fire tv stick", "fire stick": "fire tv stick",
    "firestick": "fire tv stick", "fire tv": "fire tv stick", "chromecast": "chromecast", "roku": "roku",
    "laptop": "laptop", "macbook": "macbook", "chromebook": "chromebook", "desktop": "desktop",
    "pc": "pc", "gaming pc": "pc", "computer": "computer", "imac": "imac",
    "phone": "phone", "mobile": "phone", "smartphone": "phone", "cell phone": "phone", "cellphone": "phone",
    "iphone": "iphone", "android phone": "phone", "ipad": "ipad", "tablet": "tablet", "kindle": "kindle",
    "ps5": "ps5", "playstation 5": "ps5", "ps4": "ps4", "playstation 4": "ps4", "playstation": "playstation",
    "xbox": "xbox", "xbox series x": "xbox", "xbox one": "xbox", "nintendo switch": "nintendo switch",
    "console": "console", "smart speaker": "smart speaker", "alexa": "smart speaker", "echo dot": "smart speaker",
    "google home": "smart speaker", "printer": "printer", "cctv": "security camera",
    "security camera": "security camera", "smartwatch": "smartwatch", "smart watch": "smartwatch",
    "work laptop": "laptop", "baby monitor": "baby monitor",
}
# Generic nouns that name a device only with a determiner ("my phone", "the TV"): "phone me",
# "mobile number" are not devices.
DEVICES_NEED_DETERMINER = {"phone", "mobile", "computer", "console", "desktop", "tablet", "printer", "echo"}

PLACES = (
    "upstairs", "downstairs", "basement", "attic", "loft", "garage", "garden", "backyard", "balcony",
    "terrace", "patio", "master bedroom", "bedroom", "kids room", "kids' room", "guest room", "spare room",
    "living room", "lounge", "dining room", "kitchen", "home office", "study", "hallway", "back room",
    "front room", "conservatory", "ground floor", "first floor", "second floor", "third floor", "top floor",
    "1st floor", "2nd floor", "3rd floor", "every room", "whole house", "entire house", "whole flat",
    "everywhere",
)

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
MONTH_ABBR = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")

# Capitalised words that follow "I'm" / "this is" without being a name.
NAME_STOP = {
    "not", "sorry", "happy", "unhappy", "fine", "good", "great", "ok", "okay", "still", "having", "getting",
    "trying", "calling", "writing", "facing", "here", "back", "new", "moving", "the", "a", "an", "very", "so",
    "really", "just", "also", "sure", "done", "ready", "interested", "unable", "angry", "frustrated", "tired",
    "confused", "looking", "paying", "on", "in", "at", "with", "from", "your", "my", "customer", "working",
    "using", "going", "glad", "afraid", "away", "home", "out", "upset", "annoyed", "disappointed", "fed",
    "waiting", "ridiculous", "unacceptable", "terrible", "urgent", "again", "about", "sick", "done", "tired",
    "actually", "currently", "now", "today", "yesterday", "hi", "hello", "hey", "thanks", "thank", "please",
    "no", "yes", "yeah", "nope", "well", "frankly", "honestly", "afraid", "lost", "stuck", "ill", "busy",
    "indian", "british", "american", "french", "german", "spanish", "italian", "canadian", "australian",
    "it", "this", "that", "there", "what", "who", "why", "how", "when", "where", "gonna", "about", "also",
    "fibre", "fiber", "wifi", "router", "internet", "broadband", "slow", "down", "offline", "online", "unsure",
    "glad", "relieved", "calling", "contacting", "reaching", "reporting", "following", "following-up",
    "afk", "all", "one", "someone", "somebody", "nobody", "everyone", "sir", "madam",
    *WEEKDAYS, *MONTHS,
}
NAME_PARTICLES = {"van", "von", "de", "da", "di", "del", "der", "la", "le", "bin", "binti", "al", "el", "dos", "du"}
TITLES = {"mr", "mrs", "ms", "miss", "dr", "prof"}  # skipped before a name, never part of it
