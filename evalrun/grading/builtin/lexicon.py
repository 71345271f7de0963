"""Word lists of the builtin grader: small, generic English tables, no model, no download.

The synonym and antonym tables are deliberately short and domain-neutral (common verbs, adjectives and
units). They make the lexical scorer tolerate everyday rewording; they do not make it understand paraphrase.
"""

from __future__ import annotations


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of `text` as a frozenset (keeps long word lists readable)."""
    return frozenset(text.split())


STOPWORDS = words("""
a an the this that these those there here it its it's they them their theirs he him his she her hers we us our
you your i me my mine who whom whose which what when where why how whether if then than so such as of in on at
by for with from to into onto upon over under about around roughly approximately nearly almost some any each
every all both either also too very just only even still yet already much many most more lot lots several
and or but because while whereas although though since until till after before during between among across
through throughout within without against toward towards per via be is am are was were been being do does did
done doing have has had having will would shall should can could may might ought let lets
one's oneself itself themselves himself herself ourselves yourself myself
yes ok okay well really actually generally usually typically often sometimes mainly mostly largely
unfortunately fortunately sadly luckily sorry please anymore basically honestly hopefully simply definitely
absolutely certainly probably perhaps maybe however indeed course
say says said according answer question following below above-mentioned etc e.g i.e vs
up out off down away back again further once own same other another something anything everything
thing things way ways kind type lot less fewer
""")

#: Frequent, low-information content words: they weigh LIGHT_WEIGHT in the coverage (an IDF stand-in).
LIGHT_WORDS = words("""
take make get give put set keep go come bring let use help need lead place part time times thing people person
new good well high low big small many great important certain different various whole local general
find show call try turn move live hold include involve allow provide become seem begin start end run
case fact point number group area world year day week month side end kind sort form example
""")

#: Words that negate their clause (after contractions are expanded: "didn't" -> "did not").
NEGATIONS = words("not no never none nobody nothing nowhere neither nor cannot non "
                  "absent outside lack lacks lacked lacking without")  # the last: negation without "not"

MONTHS = {
    **{m: m[:3] for m in sorted(words("january february march april may june july august september october "
                                      "november december"))},
    "jan": "jan", "feb": "feb", "mar": "mar", "apr": "apr", "jun": "jun", "jul": "jul", "aug": "aug",
    "sep": "sep", "sept": "sep", "oct": "oct", "nov": "nov", "dec": "dec",
}
# "may" is far more often the modal verb: it is a month only when capitalised, handled in tokenize's caller
# by keeping it out of this table.
del MONTHS["may"]
WEEKDAYS = words("monday tuesday wednesday thursday friday saturday sunday")

NUMBER_WORDS: dict[str, int] = {
    w: i for i, w in enumerate(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty"])
}
NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
                     "ninety": 90, "dozen": 12, "twice": 2, "double": 2, "triple": 3})
SCALES: dict[str, float] = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
                            "bn": 1e9}
ORDINALS: dict[str, int] = {w: i + 1 for i, w in enumerate(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh", "twelfth"])}

#: Unit abbreviations -> the word they abbreviate (then stemmed like any word).
UNITS = {
    "km": "kilometre", "kms": "kilometre", "m": "metre", "cm": "centimetre", "mm": "millimetre",
    "kg": "kilogram", "kgs": "kilogram", "g": "gram", "lb": "pound", "lbs": "pound", "mi": "mile",
    "ft": "foot", "h": "hour", "hr": "hour", "hrs": "hour", "min": "minute", "mins": "minute", "sec": "second",
    "yr": "year", "yrs": "year", "pct": "percent", "usd": "dollar", "eur": "euro", "gbp": "pound",
    "km2": "kilometre", "kmh": "kilometre",
}

#: Irregular inflections -> base form (applied before and after suffix stripping).
IRREGULAR = {
    "was": "be", "were": "be", "been": "be", "is": "be", "are": "be", "am": "be",
    "had": "have", "has": "have", "did": "do", "does": "do", "done": "do",
    "uses": "use", "using": "use", "used": "use",
    "went": "go", "gone": "go", "came": "come", "became": "become", "began": "begin", "begun": "begin",
    "bought": "buy", "brought": "bring", "built": "build", "caught": "catch", "chose": "choose",
    "chosen": "choose", "drove": "drive", "driven": "drive", "fell": "fall", "fallen": "fall", "felt": "feel",
    "fought": "fight", "found": "find", "gave": "give", "given": "give", "grew": "grow", "grown": "grow",
    "held": "hold", "kept": "keep", "knew": "know", "known": "know", "led": "lead", "left": "leave",
    "lost": "lose", "made": "make", "meant": "mean", "met": "meet", "paid": "pay", "ran": "run",
    "rose": "rise", "risen": "rise", "sold": "sell", "sent": "send", "spent": "spend", "spoke": "speak",
    "spoken": "speak", "stole": "steal", "stolen": "steal", "stood": "stand", "struck": "strike",
    "taught": "teach", "thought": "think", "told": "tell", "took": "take", "taken": "take", "won": "win",
    "wrote": "write", "written": "write", "saw": "see", "seen": "see", "broke": "break", "broken": "break",
    "drew": "draw", "drawn": "draw", "fled": "flee", "flew": "fly", "flown": "fly", "hid": "hide",
    "shot": "shoot", "sang": "sing", "sung": "sing", "swam": "swim", "threw": "throw", "thrown": "throw",
    "woke": "wake", "wore": "wear", "worn": "wear", "children": "child", "men": "man", "women": "woman",
    "people": "person", "feet": "foot", "teeth": "tooth", "mice": "mouse", "lives": "life", "wives": "wife",
    "better": "good", "best": "good", "worse": "bad", "worst": "bad", "larger": "large", "largest": "large",
    "bigger": "big", "biggest": "big", "smaller": "small", "smallest": "small", "highest": "high", "lowest": "low", "older": "old", "oldest": "old", "younger": "young",
    "youngest": "young", "longer": "long", "longest": "long", "shorter": "short", "shortest": "short",
    "taller": "tall", "tallest": "tall", "deeper": "deep", "deepest": "deep", "greater": "great",
    "greatest": "great", "faster": "fast", "fastest": "fast", "slower": "slow", "slowest": "slow",
    "wider": "wide", "widest": "wide", "heavier": "heavy", "heaviest": "heavy", "earlier": "early",
    "earliest": "early", "later": "late", "latest": "late", "richer": "rich", "poorer": "poor",
    "stronger": "strong", "weaker": "weak", "closer": "close", "farther": "far", "further": "far",
}

#: Groups of interchangeable words (the first is the group's key). Generic, everyday vocabulary only.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("buy", "purchase", "acquire", "acquisition"),
    ("begin", "start", "commence", "launch", "open"),
    ("end", "finish", "complete", "conclude"),
    ("big", "large", "huge", "great", "major", "enormous"),
    ("small", "little", "tiny", "minor"),
    ("rise", "increase", "grow", "climb", "gain", "raise", "boost", "higher"),
    ("fall", "drop", "decline", "decrease", "reduce", "cut", "lower", "shrink", "plunge"),
    ("make", "produce", "create", "generate", "yield", "manufacture"),
    ("build", "construct", "erect"),
    ("help", "assist", "aid"),
    ("show", "display", "exhibit"),
    ("need", "require", "must"),  # modality: "must return" / "do not need to return"
    ("stay", "remain"),
    ("leave", "depart", "exit"),
    ("collect", "gather"),
    ("get", "receive", "obtain"),
    ("kill", "murder", "slay"),
    ("die", "perish"),
    ("child", "kid"),
    ("doctor", "physician"),
    ("area", "region", "zone", "district"),
    ("tall", "high"),
    ("hire", "employ"),
    ("stop", "halt", "cease"),
    ("hurt", "injure", "injury", "wound"),
    ("sick", "ill", "illness", "sickness", "disease", "ailment"),
    ("allow", "permit", "let"),
    ("main", "primary", "chief", "principal", "key"),
    ("cost", "price"),
    ("happen", "occur"),
    ("rich", "wealthy"),
    ("fast", "quick", "rapid", "swift"),
    ("country", "nation"),
    ("state", "declare", "announce"),
    ("use", "utilise", "utilize"),
    ("show", "demonstrate", "reveal"),
    ("home", "house"),
    ("car", "automobile"),
    ("job", "work"),
    ("famous", "renowned", "noted", "celebrated"),
    ("metre", "meter"),
    ("kilometre", "kilometer"),
    ("centre", "center"),
    ("percent", "per cent", "percentage"),
    ("travel", "journey", "trip"),
    ("try", "attempt"),
    ("choose", "select", "pick"),
    ("answer", "reply", "respond"),
    ("speak", "talk"),
    ("tell", "inform"),
    ("total", "overall"),
    ("pay", "fund", "finance"),
    ("ban", "prohibit", "forbid"),
    ("fix", "repair", "mend"),
    ("shut", "close"),
    ("protect", "defend", "guard"),
    ("harm", "damage"),
    ("tired", "fatigue", "exhaustion"),
    ("sea", "ocean"),
    ("city", "town"),
    ("enough", "sufficient", "adequate"),
    ("ask", "request"),
    ("mistake", "error"),
    # everyday synonyms (general English, thesaurus-style; not drawn from any benchmark item)
    ("researcher", "scientist"),
    ("worker", "employee", "staff"),
    ("company", "firm", "corporation", "business"),
    ("profit", "earnings"),
    ("revenue", "sales", "turnover"),
    ("result", "outcome"),
    ("study", "research"),
    ("problem", "issue", "difficulty", "trouble"),
    ("rebuild", "reconstruct"),
    ("destroy", "demolish", "wreck", "ruin"),
    ("find", "discover", "detect"),
    ("author", "writer"),
    ("film", "movie"),
    ("picture", "image", "photo", "photograph"),
    ("shop", "store"),
    ("smart", "clever", "intelligent"),
    ("hard", "difficult"),
    ("easy", "simple"),
    ("seem", "appear"),
    ("whole", "entire"),
    ("amount", "quantity"),
    ("speed", "velocity", "pace"),
    ("goal", "aim", "objective", "target"),
    ("plan", "scheme"),
    ("expect", "anticipate", "predict", "forecast"),
    ("think", "believe"),
    ("save", "rescue"),
    ("warn", "caution"),
    ("hide", "conceal"),
    ("correct", "accurate"),
    ("wrong", "incorrect"),
    ("sure", "certain"),
    ("far", "distant"),
    ("modern", "contemporary"),
    ("old", "elderly", "aged"),
    ("happy", "glad", "pleased"),
    ("angry", "furious"),
    ("afraid", "scared", "frightened"),
    ("beautiful", "pretty", "attractive"),
    ("dangerous", "hazardous", "risky"),
    ("important", "significant", "crucial", "vital", "essential"),
    ("death", "fatality"),
    ("cure", "heal"),
    ("medicine", "drug", "medication"),
    ("person", "individual"),
    ("ship", "vessel", "boat"),
    ("aircraft", "airplane", "aeroplane"),
    ("team", "squad"),
    ("beat", "defeat"),
    ("law", "legislation"),
    ("rule", "regulation"),
    ("boss", "manager"),
    ("discuss", "debate"),
    ("agreement", "deal", "accord"),
    ("explain", "clarify"),
    ("describe", "depict", "portray"),
    ("understand", "comprehend"),
    ("teach", "instruct", "educate"),
    ("change", "alter", "modify"),
    ("improve", "enhance"),
    ("worsen", "deteriorate"),
    ("extend", "expand", "enlarge"),
    ("remove", "eliminate"),
    ("contain", "hold"),
    ("move", "relocate", "shift"),
    ("send", "dispatch"),
    ("carry", "transport"),
    ("hit", "strike"),
    ("attack", "assault"),
    ("fight", "battle", "combat"),
    ("war", "conflict"),
    ("capture", "seize"),
    ("steal", "rob"),
    ("escape", "flee"),
    ("search", "seek"),
    ("watch", "observe"),
    ("eat", "consume"),
    ("provide", "supply"),
    ("rare", "uncommon", "scarce"),
    ("common", "frequent", "widespread"),
    ("usual", "normal", "typical", "ordinary"),
    ("strange", "odd", "unusual"),
    ("part", "portion"),
    ("cheap", "inexpensive"),
    ("expensive", "pricey"),
    ("quit", "resign"),
    ("marry", "wed"),
    ("visitor", "guest"),
    ("audience", "spectator", "viewer"),
    ("fan", "supporter"),
    ("competition", "contest", "tournament"),
    ("prize", "award"),
    ("idea", "notion", "concept"),
    ("method", "technique", "approach"),
    ("device", "tool", "instrument", "gadget"),
    ("data", "information"),
    ("fault", "defect", "flaw"),
    ("test", "trial", "experiment"),
    ("sample", "specimen"),
    ("expert", "specialist"),
    ("pain", "ache"),
    ("danger", "risk", "hazard", "threat"),
    # British / American spellings
    ("honour", "honor"), ("colour", "color"), ("favourite", "favorite"), ("organise", "organize"),
    ("realise", "realize"), ("analyse", "analyze"), ("programme", "program"), ("defence", "defense"),
    ("licence", "license"), ("theatre", "theater"), ("litre", "liter"), ("tonne", "ton"), ("grey", "gray"),
    ("aluminium", "aluminum"), ("neighbour", "neighbor"), ("labour", "labor"), ("harbour", "harbor"),
)

#: Pairs of opposites: a claim using one where the matching evidence uses the other is contradicted.
ANTONYM_PAIRS: tuple[tuple[str, str], ...] = (
    ("rise", "fall"), ("large", "small"), ("high", "low"), ("approve", "reject"), ("accept", "reject"),
    ("win", "lose"), ("open", "close"), ("before", "after"), ("north", "south"), ("east", "west"),
    ("northern", "southern"), ("eastern", "western"), ("male", "female"), ("young", "old"), ("early", "late"),
    ("safe", "unsafe"), ("safe", "dangerous"), ("legal", "illegal"), ("possible", "impossible"),
    ("above", "below"), ("inside", "outside"), ("success", "failure"), ("succeed", "fail"),
    ("true", "false"), ("alive", "dead"), ("increase", "decrease"), ("gain", "loss"), ("profit", "loss"),
    ("positive", "negative"), ("public", "private"), ("cheap", "expensive"), ("free", "paid"),
    ("strong", "weak"), ("fast", "slow"), ("hot", "cold"), ("wet", "dry"), ("long", "short"),
    ("deep", "shallow"), ("wide", "narrow"), ("heavy", "light"), ("rich", "poor"), ("good", "bad"),
    ("full", "empty"), ("import", "export"), ("buy", "sell"), ("arrive", "leave"),
    ("include", "exclude"), ("allow", "ban"), ("agree", "disagree"), ("like", "dislike"),
    ("majority", "minority"), ("maximum", "minimum"), ("always", "sometimes"),
    ("required", "optional"), ("mandatory", "optional"), ("permit", "prohibit"), ("allow", "prohibit"),
    ("allow", "forbid"), ("valid", "void"), ("automatic", "manual"), ("temporary", "permanent"),
    ("earliest", "latest"), ("charge", "free"), ("refuse", "accept"), ("lend", "borrow"),
    ("enable", "disable"), ("add", "remove"), ("add", "deduct"), ("credit", "debit"),
    ("better", "worse"), ("urban", "rural"), ("modern", "ancient"),
)
