"""The intent gate's rules: is this query research, chit-chat, a harmful request or too vague?

Runs in the driver before any research budget is spent. The rules are deliberately narrow: they
decide only the obvious cases (a greeting, "tell me more", "how do I make sarin") and leave the rest
to research (or, when a model is configured, to one small classification call). A research question
must never be stopped here, so harmful patterns need both an instructional framing ("how to",
"step by step") and a well-known mass-harm object; questions *about* malware, weapons or CVEs pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from deepresearch.policies.intent_words import (
    CHITCHAT_PHRASES,
    CHITCHAT_WORDS,
    FILLER,
    STOPWORDS,
    THANKS_WORDS,
    VAGUE,
)

Outcome = Literal["research", "chitchat", "harmful", "ambiguous", "undecided"]
GatedOutcome = Literal["chitchat", "harmful", "ambiguous"]


@dataclass(frozen=True)
class Intent:
    """What the gate decided; ``reply`` is what the user is told when the run does not start."""

    outcome: Outcome
    reply: str = ""
    reason: str = ""

    @property
    def gated(self) -> bool:
        return self.outcome in ("chitchat", "harmful", "ambiguous")


# --------------------------------------------------------------------------- replies

CHITCHAT_REPLY = (
    "Hello! I am a research assistant: ask me a research question (for example "
    '"What drove Apple\'s net sales in Q3 2023?") and I will search, read sources and write a '
    "cited report."
)
THANKS_REPLY = "You're welcome! Ask another research question whenever you like."
AMBIGUOUS_REPLY = (
    "What would you like me to research? Please ask a specific question, naming the topic, "
    "entity or period you mean."
)
HARMFUL_REPLIES = {
    "weapons": "I can't help with making weapons capable of mass harm.",
    "malware": "I can't help with building malware or attacking systems or accounts you don't own.",
    "violence": "I can't help with hurting other people.",
    "csam": "I can't help with that.",
    "other": "I can't help with that request.",
    "self-harm": (
        "I can't help with that, but you don't have to face this alone: please reach out to someone "
        "you trust or a crisis line (in the US call or text 988; elsewhere see "
        "https://findahelpline.com)."
    ),
}

# --------------------------------------------------------------------------- vocabulary

_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")  # any script: a Chinese query is not "empty"


# --------------------------------------------------------------------------- harmful patterns

_HOW = (
    r"(?:how\s+(?:do|can|could|would|should|might)\s+(?:i|we|you|one|someone|somebody|people)\s+"
    r"|how\s+to\s+|instructions?\s+(?:for|to|on)\s+|step[\s-]+by[\s-]+step\s+(?:guide\s+)?"
    r"(?:to\s+|for\s+|on\s+)?|(?:a\s+)?guide\s+(?:to|for|on)\s+|recipe\s+(?:for|to)\s+"
    r"|teach\s+me\s+(?:how\s+)?(?:to\s+)?|help\s+me\s+|i\s+want\s+to\s+|best\s+way\s+to\s+"
    r"|easiest\s+way\s+to\s+)"
)
_GAP = r"(?:[\w'’-]+\s+){0,3}?"  # a few words between a verb and its object ("make a homemade")
_MAKE = (
    r"(?:make|making|build|building|synthesi[sz]e|produce|create|manufacture|weaponi[sz]e|"
    r"assemble|cook|brew|culture|grow|enhance|detonate|set\s+off)"
)
_WEAPON = (
    r"(?:nerve\s+(?:agent|gas)|sarin|soman|tabun|novichok|vx(?:\s+gas)?|mustard\s+gas|"
    r"chlorine\s+gas\s+(?:weapon|attack)|chemical\s+weapons?|bio\s*weapons?|biological\s+weapons?|"
    r"anthrax|smallpox|ricin|botulinum(?:\s+toxin)?|nuclear\s+(?:bomb|weapon|device)s?|"
    r"atomic\s+bomb|dirty\s+bomb|pipe\s+bomb|nail\s+bomb|car\s+bomb|suicide\s+vest|bombs?|"
    r"explosives?|explosive\s+devices?|ied|napalm|molotov(?:\s+cocktails?)?|thermite\s+bomb|"
    r"ghost\s+gun|untraceable\s+(?:gun|firearm)|3d[\s-]printed\s+gun)"
)
# The harmful object must end the phrase ("a pipe bomb", not "a bath bomb" or "a virus scanner").
_END = r"(?<!bath\sbomb)(?<!bath\sbombs)(?<!seed\sbomb)(?=\s*(?:$|[.,?!;:]|\s(?:that|to|which|for|and|in|on|with|using|from|against|at|at\s+home)\b))"
_WRITE = (
    r"(?:write|writing|code|coding|create|creating|build|building|make|making|develop|program|"
    r"deploy|spread|distribute|launch|run)"
)
_MALWARE = (
    r"(?:ransomware|keylogger|botnet|computer\s+virus|virus|worm|trojan|malware|rootkit|"
    r"spyware|stalkerware|infostealer|credential\s+stealer|password\s+stealer|cryptojacker|"
    r"ddos\s+attack)"
)
_VICTIM = (
    r"(?:someone(?:'s|’s)?|somebody(?:'s|’s)?|a\s+person(?:'s|’s)?|people(?:'s|’s)?|"
    r"my\s+(?:ex|wife|husband|girlfriend|boyfriend|partner|neighbou?r|boss|coworker|co-worker|"
    r"teacher|classmate|friend|roommate|sister|brother|mother|father|mom|dad)(?:'s|’s)?|"
    r"other\s+people(?:'s|’s)?|a\s+child|children|kids)"
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
    ("weapons", re.compile(rf"\b{_HOW}{_MAKE}\s+{_GAP}{_WEAPON}{_END}")),
    ("malware", re.compile(rf"\b{_HOW}{_WRITE}\s+{_GAP}{_MALWARE}{_END}")),
    (
        "malware",
        re.compile(
            rf"\b{_HOW}(?:hack|hacking|break|get)\s+(?:into\s+)?{_VICTIM}\s+"
            r"(?:\w+\s+){0,2}?(?:account|accounts|email|e-mail|phone|computer|laptop|instagram|"
            r"facebook|snapchat|whatsapp|icloud|wifi|wi-fi|webcam|messages)\b"
        ),
    ),
    (
        "malware",
        re.compile(
            rf"\b{_HOW}(?:steal|harvest|phish)\s+{_GAP}(?:passwords?|credentials|credit\s+cards?|"
            r"bank\s+details|logins?)\s+(?:from|of)\s+(?:people|users|victims|someone|others)\b"
        ),
    ),
    (
        "self-harm",
        re.compile(
            r"\b(?:how\s+(?:do|can|could|should)\s+i|how\s+to|best\s+way\s+to|easiest\s+way\s+to|"
            r"painless\s+way\s+to|quickest\s+way\s+to|help\s+me|i\s+want\s+to)\s+"
            r"(?:kill\s+myself|commit\s+suicide|end\s+my\s+life|hurt\s+myself|harm\s+myself|"
            r"cut\s+myself|hang\s+myself|overdose)\b"
            r"|\bhow\s+many\s+(?:pills|tablets)\s+(?:\w+\s+){0,3}?(?:to|would|will)\s+"
            r"(?:kill\s+(?:me|myself|a\s+person)|overdose)\b"
        ),
    ),
    (
        "violence",
        re.compile(
            rf"\b{_HOW}(?:kill|murder|poison|strangle|stab|kidnap|torture)\s+"
            rf"{_VICTIM}(?:\s|$|[.,?!])(?!\s*(?:process|task|thread|job|session)\b)"
            r"|\b(?:untraceable|undetectable)\s+poisons?\b"
            r"|\bget\s+away\s+with\s+murder(?:ing)?\s+(?:someone|somebody|my)\b"
        ),
    ),
)


# --------------------------------------------------------------------------- classification


def _normalize(query: str) -> str:
    text = query.lower().replace("’", "'")
    return " ".join(text.split())


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def harmful_category(query: str) -> str | None:
    """The harmful-request category the query falls into, or None."""
    text = _normalize(query)
    for category, pattern in _HARMFUL:
        if pattern.search(text):
            return category
    return None


def _is_chitchat(text: str) -> tuple[bool, bool]:
    """(only small talk, mentions thanks) for a normalized message."""
    rest = text
    for phrase in CHITCHAT_PHRASES:
        rest = re.sub(rf"\b{re.escape(phrase)}\b", " ", rest)
    words = _words(rest)
    spoken = [w for w in words if w in CHITCHAT_WORDS]
    leftover = [w for w in words if w not in CHITCHAT_WORDS and w not in FILLER]
    matched_phrase = rest != text
    only_talk = not leftover and (bool(spoken) or matched_phrase)
    thanks = any(w in THANKS_WORDS for w in _words(text))
    return only_talk, thanks


def content_words(query: str) -> list[str]:
    """Words that carry research content: not function words, not vague pointers."""
    return [
        w
        for w in _words(_normalize(query))
        if w not in STOPWORDS and w not in VAGUE and w not in CHITCHAT_WORDS and w not in FILLER
    ]


def classify(query: str) -> Intent:
    """The rule verdict. ``undecided`` means short but possibly real: research, unless a configured
    model says otherwise. Order matters: a harmful request wrapped in a greeting is still refused."""
    text = _normalize(query)
    category = harmful_category(text)
    if category is not None:
        return Intent("harmful", HARMFUL_REPLIES[category], f"harmful request ({category})")
    only_talk, thanks = _is_chitchat(text)
    if only_talk:
        reply = THANKS_REPLY if thanks else CHITCHAT_REPLY
        return Intent("chitchat", reply, "greeting or small talk")
    content = content_words(text)
    if not content:
        return Intent("ambiguous", AMBIGUOUS_REPLY, "no research topic in the query")
    if len(content) >= 3 or any(any(c.isdigit() for c in w) for w in content):
        return Intent("research", reason="a research question")
    return Intent("undecided", reason="a short query")


def from_model(outcome: str, reply: str) -> Intent:
    """A model's verdict on an undecided query; anything unexpected means research.

    A model may only ask for clarification or answer small talk with its own words; a refusal
    always uses the fixed wording (a model's text is not shown for harmful requests)."""
    reply = " ".join(reply.split())[:500]
    if outcome == "chitchat":
        return Intent("chitchat", reply or CHITCHAT_REPLY, "model: small talk")
    if outcome == "ambiguous":
        return Intent("ambiguous", reply or AMBIGUOUS_REPLY, "model: too ambiguous")
    if outcome == "harmful":
        return Intent("harmful", HARMFUL_REPLIES["other"], "model: harmful request")
    return Intent("research", reason="model: research")
