"""The intent gate's harm rules: a request for instructions × a harm category × a capability.

A query is refused only when three things meet in one sentence: the *shape* of a request for
instructions ("how do I", "how to", "give me steps", an imperative "write ..."), a *capability*
verb aimed at the harm ("synthesize", "build", "write", "hack into") and a harmful *object* or
*target* ("sarin", "a pipe bomb", "ransomware", "my ex's account"). Each part alone is ordinary
research vocabulary: a question *about* sarin, ransomware or a treaty has no capability aimed at
the object, and a defensive verb between the shape and the capability ("how to detect people who
build bombs") breaks the chain. The object must end its noun phrase, so "a virus scanner", "a bath
bomb" or "a botnet detection system" are not the harmful thing itself.
"""

from __future__ import annotations

import re

from deepresearch.policies.gate import lexicon

# --------------------------------------------------------------------------- the request shape

_POLITE = r"(?:(?:please|pls|can\s+you|could\s+you|would\s+you|will\s+you)\s+)?"
_SUBJECT = r"(?:i|we|you|one|someone|somebody|people|a\s+person|anyone)"
# A question or request for instructions, anywhere in the sentence.
_ASK = (
    r"(?:how\s+(?:do|can|could|would|should|might|does|will)\s+" + _SUBJECT + r"\s+"
    r"|how\s+(?:i|we)\s+(?:can|could|should)\s+|how\s+to\s+|how\s+would\s+i\s+"
    r"|(?:what(?:'s|\s+is|\s+are)\s+)?(?:the\s+)?(?:best|easiest|quickest|simplest|cheapest|fastest"
    r"|safest|surest)\s+(?:ways?|methods?|means)\s+(?:to|of|for)\s+"
    r"|(?:detailed\s+|full\s+|complete\s+|exact\s+)?(?:instructions?|steps|step[\s-]+by[\s-]+step"
    r"(?:\s+(?:guide|instructions|procedure))?|guide|tutorial|recipe|procedure|protocol|directions"
    r"|walkthrough|blueprints?)\s+(?:for|to|on|of)\s+(?:how\s+to\s+)?"
    r"|i\s+(?:want|need|would\s+like|wanna|plan|am\s+going|intend)\s+(?:to\s+)?"
    r"|(?:help|teach|show)\s+(?:me|us)\s+(?:how\s+)?(?:to\s+)?"
    r"|(?:tell|explain\s+to)\s+(?:me|us)\s+how\s+to\s+|explain\s+how\s+to\s+"
    r"|(?:give|send|provide|write)\s+(?:me|us)\s+"
    r"|^" + _POLITE + r"(?:give|provide|list|outline|describe|detail|share|explain|tell)\s+)"
)
# Words that turn the request into defence, analysis or history: they break the chain.
_DEFENSIVE = (
    r"(?:detect|detecting|protect|protecting|prevent|preventing|defend|defending|stop|stopping"
    r"|block|blocking|remove|removing|recogni[sz]e|identify|spot|survive|respond|report|counter"
    r"|mitigate|analy[sz]e|analy[sz]ing|study|understand|treat|treating|cure|decontaminate"
    r"|dispose|destroy|neutrali[sz]e|recover|clean|secure|against|about|why|history|historically"
    r"|regulate|ban|banned|verify|safely\s+store)"
)
_CLAUSE = r"(?:how|why|what|when|where|who|whether|did|does|do|they|he|she|it|countries)"
# Words between the ask and the verb ("how to *secretly* make", "give me *a way to* make"): a
# defensive word or a new clause ("explain *how Iran could* build ...") breaks the chain.
_BRIDGE = rf"(?:(?!(?:{_DEFENSIVE}|{_CLAUSE})\b)[\w'-]+\s+){{0,3}}?"
# An imperative that is itself the capability ("Write ransomware ...", "Build me a pipe bomb").
_START = r"(?:^|[.!?;:]\s*)(?:hi|hello|hey|ok|okay)?[\s,!]*" + _POLITE

# --------------------------------------------------------------------------- capabilities

_MAKE = (
    r"(?:make|making|build|building|synthesi[sz]e|synthesi[sz]ing|produce|producing|create"
    r"|creating|manufacture|manufacturing|weaponi[sz]e|weaponi[sz]ing|assemble|cook|brew|culture"
    r"|grow|enhance|detonate|set\s+off|obtain|acquire|extract|purify|refine|aerosoli[sz]e"
    r"|disperse|deploy|release|spread|mix|prepare|get|buy|smuggle)"
)
_NOUN_MAKE = (  # "a synthesis route for", "the production process of", "a recipe for"
    r"(?:(?:synthesis|synthetic|production|manufacturing|preparation|cooking|brewing)\s+"
    r"(?:(?:route|pathway|procedure|steps|instructions|protocol|recipe|method|process)s?\s+)?"
    r"|(?:recipes?|instructions?|blueprints?|formulas?|schematics?)\s+)"
    r"(?:for|of|to\s+make|to\s+build)\s+"
)
_WRITE = (
    r"(?:write|writing|code|coding|create|creating|build|building|make|making|develop|program"
    r"|deploy|spreads?|spreading|distribute|launch|run|generate|design|craft|install|plant"
    r"|infect\s+\w+\s+with)"
)
_GAP = (  # a few modifiers between a verb and its object; never a preposition (a topic follows)
    r"(?:(?!(?:on|about|of|for|against|regarding|around|into|concerning|from|by|in|to|with|that)\b)"
    r"[\w'-]+\s+){0,3}?"
)

# --------------------------------------------------------------------------- harmful objects

_WEAPON = (
    r"(?:nerve\s+(?:agent|gas)s?|sarin|soman|tabun|cyclosarin|novichok|vx|mustard\s+gas"
    r"|sulfur\s+mustard|phosgene|chlorine\s+gas|poison\s+gas|toxic\s+gas|chemical\s+weapons?"
    r"|bio\s*weapons?|biological\s+weapons?|anthrax|smallpox|plague\s+bacteria|ricin|abrin"
    r"|botulinum(?:\s+toxin)?|nuclear\s+(?:bomb|weapon|device)s?|atomic\s+bomb|dirty\s+bomb"
    r"|pipe\s+bombs?|nail\s+bombs?|car\s+bombs?|suicide\s+vest|bombs?|explosives?"
    r"|explosive\s+devices?|ieds?|napalm|molotov(?:\s+cocktails?)?|thermite\s+bomb|tatp|hmtd"
    r"|ghost\s+guns?|untraceable\s+(?:guns?|firearms?)|3d[\s-]printed\s+guns?)"
)
_WEAPON_TAIL = (  # "sarin gas", "VX nerve agent", "anthrax spores"
    r"(?:\s+(?:nerve\s+)?(?:gas|agents?|weapons?|toxin|spores|bombs?|devices?|precursors?))?"
)
_BENIGN_BOMB = r"(?<!bath\sbomb)(?<!bath\sbombs)(?<!seed\sbomb)(?<!smoke\sbomb)(?<!stink\sbomb)"
_MALWARE = (
    r"(?:ransomware|keyloggers?|key\s+loggers?|botnets?|computer\s+virus(?:es)?|virus(?:es)?"
    r"|worms?|trojans?|malware|rootkits?|spyware|stalkerware|infostealers?|credential\s+stealers?"
    r"|password\s+stealers?|cryptojackers?|ddos\s+attacks?|remote\s+access\s+trojans?|rats?"
    r"|wipers?|logic\s+bombs?)"
)
# The object ends its noun phrase: what may follow it ("... sarin at home", "... ransomware that").
_END = (
    r"(?=\s*(?:$|[.,?!;:()]|\s(?:that|which|to|for|and|or|in|on|with|using|from|against|at"
    r"|targeting|so|without|step|steps|myself|yourself|me|us|i|we|like|capable|able|quickly"
    r"|cheaply|easily|undetected|secretly|now|please|then|by|of|out|under|inside|into|here"
    r"|if|when|where|as|across|through|over|onto|via|around)\b))"
)
_ADULTS = (
    r"someone|somebody|a\s+person|people|other\s+people|others"
    r"|my\s+(?:ex|wife|husband|girlfriend|boyfriend|partner|neighbou?r|boss|coworker|co-worker"
    r"|colleague|teacher|classmate|friend|roommate|sister|brother|mother|father|mom|dad|landlord)"
)
_VICTIM = rf"(?:{_ADULTS}|a\s+child|children|kids|my\s+(?:son|daughter|kids?))"  # of violence
# Hurting a person unseen: the evasion makes any phrasing a request to do it.
_HURT = (
    r"\b(?:kill|killing|murder|murdering|poison|poisoning|strangle|stab|stabbing|kidnap|torture"
    r"|hurt|hurting|harm|harming|injure|beat\s+up|drown|suffocate|shoot|shooting)"
)
_UNSEEN = (
    r"\b(?:without\s+(?:(?:getting|being)\s+caught|(?:anyone|them|the\s+police|police|anybody)"
    r"\s+(?:knowing|finding\s+out|noticing|suspecting)|leaving\s+(?:any\s+)?(?:evidence|traces?"
    r"|marks|a\s+trace))|leav(?:e|ing)\s+no\s+(?:evidence|traces?|marks|fingerprints|dna)"
    r"|undetected|untraceabl\w*|undetectabl\w*|looks?\s+like\s+(?:an\s+)?"
    r"(?:accident|natural\s+causes|suicide)|get\s+away\s+with\s+it|never\s+(?:be\s+)?(?:found|caught"
    r"|traced))"
)
_PERSON = (
    r"(?:him|her|them|(?:a|an|the|my|his|her|our|their|this)\s+(?:\w+\s+)?(?:co-?worker|colleague"
    r"|neighbou?r|husband|wife|partner|child|kid|baby|teacher|boss|man|woman|girl|boy|guy"
    r"|stranger|person|classmate|roommate|friend|relative|parent|mother|father|ex))"
)
_BODY = (
    r"(?:get\s+rid\s+of|dispose\s+of|hide|dissolve|bury)\s+(?:a|the|his|her)\s+"
    r"(?:dead\s+)?(?:body|corpse)"
)
_SPIED = rf"(?:{_ADULTS})(?:'s|s')?"  # whose devices are not one's own (a parent's care aside)
_DEVICE = (
    r"(?:accounts?|e-?mails?|phones?|computers?|laptops?|pcs?|instagram|facebook|snapchat"
    r"|whatsapp|icloud|wifi|wi-fi|webcams?|messages|texts|files|network|location|camera|passwords?)"
)
_INTRUDE = (
    r"(?:hack|hacking|hack\s+into|break\s+into|get\s+into|access|spy\s+on|track|monitor|read"
    r"|encrypt|lock|wipe|take\s+over|control|crack|log\s+into|steal|delete)"
)


def _chain(capability: str, target: str) -> re.Pattern[str]:
    """Shape, then (unbroken by a defensive word) the capability aimed at the target."""
    return re.compile(
        rf"(?:{_ASK}{_BRIDGE}{capability}\s+|{_START}{capability}\s+(?:me\s+|us\s+)?)"
        rf"{_GAP}{target}"
    )


_HARMFUL: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "csam",
        re.compile(
            r"\b(?:child\s+(?:porn|pornography|sexual\s+abuse\s+material)|csam|"
            r"(?:sexual|nude|naked|explicit)\s+(?:images?|photos?|pictures?|videos?|content)\s+of\s+"
            r"(?:children|minors|kids|a\s+child|a\s+minor))\b"
        ),
    ),
    ("weapons", _chain(_MAKE, rf"{_WEAPON}{_WEAPON_TAIL}{_BENIGN_BOMB}{_END}")),
    (
        "weapons",
        re.compile(
            rf"(?:{_ASK}|{_START}|\b(?:what|which)(?:'s|\s+is|\s+are)\s+"
            r"|\b(?:detailed|full|complete|exact|step[\s-]+by[\s-]+step)\s+)"
            rf"{_BRIDGE}{_NOUN_MAKE}{_GAP}{_WEAPON}{_WEAPON_TAIL}{_BENIGN_BOMB}{_END}"
        ),
    ),
    ("malware", _chain(_WRITE, rf"{_MALWARE}{_END}")),
    ("malware", _chain(_INTRUDE, rf"{_SPIED}\s+(?:[\w'-]+\s+){{0,2}}?{_DEVICE}\b")),
    (
        "malware",
        re.compile(
            rf"{_ASK}{_BRIDGE}(?:steal|harvest|phish)\s+{_GAP}(?:passwords?|credentials|credit\s+"
            r"cards?|bank\s+details|logins?)\s+(?:from|of)\s+(?:people|users|victims|someone"
            r"|others|customers|employees)\b"
        ),
    ),
    (
        "self-harm",
        re.compile(
            r"\b(?:how\s+(?:do|can|could|should)\s+i|how\s+to|(?:best|easiest|painless|quickest"
            r"|surest|quick|easy)\s+ways?\s+to|help\s+me|i\s+(?:want|wanna|need|plan|am\s+going)"
            r"\s+to)\s+(?:kill\s+myself|commit\s+suicide|end\s+my\s+life|end\s+it\s+all"
            r"|hurt\s+myself|harm\s+myself|cut\s+myself|hang\s+myself|overdose|die)\b"
            r"|\bhow\s+many\s+(?:pills|tablets)\s+(?:\w+\s+){0,3}?(?:to|would|will)\s+"
            r"(?:kill\s+(?:me|myself|a\s+person)|overdose|die)\b"
            r"|\b(?:painless|quick|easy|surest)\s+(?:ways?|methods?)\s+(?:to\s+)?(?:die|suicide)\b"
        ),
    ),
    (
        "violence",
        re.compile(
            rf"{_ASK}{_BRIDGE}(?:kill|murder|poison|strangle|stab|kidnap|torture|hurt)\s+"
            rf"{_VICTIM}(?:\s|$|[.,?!])(?!\s*(?:process|task|thread|job|session)\b)"
            rf"|{_ASK}{_BRIDGE}shoot\s+{_VICTIM}\s+(?:with\s+a\s+(?:gun|rifle|pistol)|dead"
            r"|to\s+death)"
            rf"|{_HURT}\s+(?:\w+\s+){{0,2}}?(?:{_VICTIM}|{_PERSON})\b.*{_UNSEEN}"
            rf"|{_ASK}{_BRIDGE}{_BODY}"
            r"|\b(?:untraceable|undetectable)\s+poisons?\b"
            r"|\bget\s+away\s+with\s+murder(?:ing)?\s+(?:someone|somebody|my)\b"
        ),
    ),
)


def subjects(text: str) -> frozenset[str]:
    """The mass-harm subjects a normalized text names ("weapons", "malware"), everyday senses
    ("bath bomb", "worm farm") aside."""
    masked = lexicon.EVERYDAY.sub(" ", text)
    found = {
        c
        for c, family in (("weapons", lexicon.WEAPON), ("malware", lexicon.MALWARE))
        if family.search(masked)
    }
    if lexicon.DESCRIBED_AGENT.search(masked) or (  # "a lethal toxin", "poison from castor beans"
        lexicon.AGENT_SOURCE.search(masked) and lexicon.POISON.search(masked)
    ):
        found.add("weapons")
    if lexicon.PASSES_DEFENDER.search(masked):  # "code that slips by Kaspersky"
        found.add("malware")
    return frozenset(found)


def operational(text: str, named: frozenset[str]) -> str | None:
    """The category when ``text`` asks for operational detail about one of the ``named``
    subjects. An operation is a verb of making (make, synthesize, enrich, write), a noun only a
    maker needs (materials, precursors, a synthesis route, the code) or, for malware, getting
    past a named defender. Amounts, conditions or the full list are refused in any frame; then
    someone else's deed ("how did the cult make"), then evasion, then a frame of history, law,
    defence, detection or treatment. What is left is refused when it names a maker's noun (with
    or without a verb, in a poem or a grandmother's story) or a method ("how do I", steps, a
    guide) anywhere, or asks with an imperative for anything but a piece of writing."""
    if not named:
        return None
    category = "weapons" if "weapons" in named else "malware"
    masked = lexicon.EVERYDAY.sub(" ", text)
    noun = lexicon.MAKER_NOUNS.search(masked)
    makes = noun or lexicon.MAKE.search(masked)
    evades = "malware" in named and (
        lexicon.EVADE.search(masked) or lexicon.PASSES_DEFENDER.search(masked)
    )
    if not (makes or evades):
        return None
    if makes and lexicon.DETAIL.search(masked):
        return category
    if lexicon.THIRD_PARTY.search(masked):
        return None
    if evades:
        return category
    if lexicon.ABOUT.search(masked):
        return None
    if noun or lexicon.METHOD.search(masked):
        return category
    if lexicon.DOCUMENTS.search(masked):  # "write an essay about ...": an author's verb
        return None
    return category if lexicon.ASKS.search(masked) else None


def lethal_dose(text: str, named: frozenset[str]) -> str | None:
    """The category when ``text`` asks for the amount that kills a person: a dose ("how much ...
    would kill", "a lethal dose") with a covert way of giving it, a person to give it to or a
    particular victim is poisoning, whatever the substance; with a mass-harm agent named, a dose
    that kills any person is that weapon's quantity. A dose alone is a safety question (caffeine,
    paracetamol, water), and so is one framed by treatment, detection or history."""
    if not lexicon.KILLING_DOSE.search(text):
        return None
    if lexicon.THIRD_PARTY.search(text) or lexicon.ABOUT.search(lexicon.COVERT.sub(" ", text)):
        return None  # "how did ...", "treatment of a lethal dose": the covert words are no frame
    if (
        lexicon.COVERT.search(text)
        or lexicon.GIVEN_TO.search(text)
        or lexicon.MARKED_VICTIM.search(text)
    ):
        return "violence"
    return "weapons" if "weapons" in named and lexicon.A_PERSON.search(text) else None


def points_back(text: str) -> bool:
    """Whether a follow-up leans on the earlier question for its subject ("how do I make it")."""
    return bool(lexicon.POINTS_BACK.search(text)) or len(text.split()) <= 3


def harmful_category(text: str, context: tuple[str, ...] = ()) -> str | None:
    """The harm category of a normalized (case-folded) query, or None. ``context`` holds the
    earlier questions of a follow-up's thread (normalized): their subjects are the follow-up's
    when it points back to them."""
    text = lexicon.EVERYDAY.sub(" ", text)
    for category, pattern in _HARMFUL:
        if pattern.search(text):
            return category
    named = named_subjects(text, context)
    return operational(text, named) or lethal_dose(text, named)


def named_subjects(text: str, context: tuple[str, ...] = ()) -> frozenset[str]:
    """The subjects of ``text``, with those of the earlier questions when it points back."""
    named = subjects(text)
    if context and points_back(text):
        named = named.union(*(subjects(q) for q in context))
    return named
