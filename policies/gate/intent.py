"""The intent gate's rules: is this query research, chit-chat, a harmful request or too vague?

Runs in the driver before any research budget is spent. The rules are deliberately narrow: they
decide only the obvious cases (a greeting, "tell me more", "how do I make sarin") and leave the rest
to research (or, when a model is configured, to one small classification call). A research question
must never be stopped here, so a harmful request needs a request for instructions, a capability and
a harmful object or target together (``policies.gate.harm``); questions *about* malware, weapons,
treaties or CVEs pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from deepresearch.policies import unsourced
from deepresearch.policies.follow_up.subject import in_context, thread_question
from deepresearch.policies.gate import harm as intent_harm
from deepresearch.policies.gate.lexicon import READABLE_SCRIPTS
from deepresearch.policies.gate.words import (
    CHITCHAT_PHRASES,
    CHITCHAT_WORDS,
    NO_CONTENT_WORDS,
    SMALL_TALK_FILLER,
    THANKS_WORDS,
    VAGUE,
)
from deepresearch.text import confusables

Outcome = Literal["research", "chitchat", "harmful", "ambiguous", "undecided"]


@dataclass(frozen=True)
class Intent:
    """What the gate decided; ``reply`` is what the user is told when the run does not start."""

    outcome: Outcome
    reply: str = ""
    reason: str = ""
    # What an undecided verdict becomes when no model is configured: research, or a refusal for
    # a request the rules cannot read that names a mass-harm subject.
    unmodelled: Literal["research", "harmful"] = "research"

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


# --------------------------------------------------------------------------- classification


def _normalize(query: str) -> str:
    return confusables.normalize(query)


def _words(text: str) -> list[str]:
    return _WORD.findall(text)


def harmful_category(query: str, context: tuple[str, ...] = ()) -> str | None:
    """The harmful-request category the query falls into, or None (``policies.gate.harm``);
    ``context`` is a follow-up's thread of earlier questions, oldest first."""
    return intent_harm.harmful_category(_normalize(query), tuple(_normalize(q) for q in context))


def readable(text: str) -> bool:
    """Whether the rules can read the text: most of its letters are in a script their word
    families cover (Latin, Cyrillic, Chinese, Japanese, Arabic)."""
    letters = [c for c in text if c.isalpha()]
    known = sum(1 for c in letters if READABLE_SCRIPTS.match(c))
    return known * 2 >= len(letters)


def _is_chitchat(text: str) -> tuple[bool, bool]:
    """(only small talk, mentions thanks) for a normalized message."""
    rest = text
    for phrase in CHITCHAT_PHRASES:
        rest = re.sub(rf"\b{re.escape(phrase)}\b", " ", rest)
    words = _words(rest)
    spoken = [w for w in words if w in CHITCHAT_WORDS]
    leftover = [w for w in words if w not in CHITCHAT_WORDS and w not in SMALL_TALK_FILLER]
    matched_phrase = rest != text
    only_talk = not leftover and (bool(spoken) or matched_phrase)
    thanks = any(w in THANKS_WORDS for w in _words(text))
    return only_talk, thanks


def content_words(query: str) -> list[str]:
    """Words that carry research content: not function words, not vague pointers."""
    return [
        w
        for w in _words(_normalize(query))
        if w not in NO_CONTENT_WORDS
        and w not in VAGUE
        and w not in CHITCHAT_WORDS
        and w not in SMALL_TALK_FILLER
    ]


def classify(query: str, context: tuple[str, ...] = ()) -> Intent:
    """The rule verdict. ``undecided`` means short but possibly real, or unreadable: research
    (unless it names a mass-harm subject the rules cannot judge), unless a configured model says
    otherwise. Order matters: a harmful request wrapped in a greeting is still refused.
    ``context`` is a follow-up's thread of earlier questions: a follow-up that points back is
    judged with their subject ("how do I make it" after a question about a nerve agent)."""
    text = _normalize(query)
    earlier = tuple(_normalize(q) for q in context)
    category = intent_harm.harmful_category(text, earlier)
    if category is not None:
        return Intent("harmful", HARMFUL_REPLIES[category], f"harmful request ({category})")
    if not readable(text):
        named = intent_harm.named_subjects(text, earlier)
        fallback: Literal["research", "harmful"] = "harmful" if named else "research"
        return Intent("undecided", reason="a language the rules cannot read", unmodelled=fallback)
    if context:  # "how did it do?" has a topic: the one it points back to
        text = _normalize(in_context(query, thread_question(list(context))))
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


def without_model(intent: Intent) -> Intent:
    """An undecided verdict when no model is there to ask: research, or a refusal of an
    unreadable request that names a mass-harm subject."""
    if intent.outcome != "undecided":
        return intent
    if intent.unmodelled == "harmful":
        return Intent("harmful", HARMFUL_REPLIES["other"], f"{intent.reason}, naming a harm")
    return Intent("research", reason=intent.reason)


def from_model(outcome: str, reply: str, query: str = "") -> Intent:
    """A model's verdict on an undecided query; anything unexpected means research.

    A model may only ask for clarification or answer small talk with its own words, and only
    the sentences of them that assert nothing beyond the query (``policies.unsourced``); a
    refusal always uses the fixed wording (a model's text is not shown for harmful requests)."""
    reply = unsourced.vet(reply, grounds=query)[:500]
    if outcome == "chitchat":
        return Intent("chitchat", reply or CHITCHAT_REPLY, "model: small talk")
    if outcome == "ambiguous":
        return Intent("ambiguous", reply or AMBIGUOUS_REPLY, "model: too ambiguous")
    if outcome == "harmful":
        return Intent("harmful", HARMFUL_REPLIES["other"], "model: harmful request")
    return Intent("research", reason="model: research")
