"""The intent gate's vocabulary: greeting, thanks, filler and vague words, kept apart from the
rules in ``policies.intent`` so the lists can grow without burying the logic."""

from __future__ import annotations

from deepresearch.text import terms

# Whole messages of greeting, thanks and small talk ("hi there, how are you?").
CHITCHAT_PHRASES = (
    "good morning",
    "good afternoon",
    "good evening",
    "good night",
    "how are you doing",
    "how are you",
    "how's it going",
    "how is it going",
    "how do you do",
    "what's up",
    "whats up",
    "nice to meet you",
    "who are you",
    "what are you",
    "what can you do",
    "thank you",
    "see you",
    "see ya",
)
CHITCHAT_WORDS = frozenset(
    [
        "hi",
        "hello",
        "hey",
        "heya",
        "hiya",
        "howdy",
        "yo",
        "greetings",
        "sup",
        "hola",
        "bonjour",
        "bye",
        "goodbye",
        "cya",
        "thanks",
        "thank",
        "thx",
        "ty",
        "cheers",
        "ok",
        "okay",
        "cool",
        "great",
        "nice",
        "awesome",
        "lol",
        "haha",
        "hehe",
        "wow",
    ]
)
THANKS_WORDS = frozenset(["thanks", "thank", "thx", "ty", "cheers"])
# Words that may accompany small talk without adding research content.
SMALL_TALK_FILLER = frozenset(
    [
        "there",
        "you",
        "all",
        "everyone",
        "so",
        "much",
        "very",
        "a",
        "lot",
        "again",
        "today",
        "bot",
        "assistant",
        "friend",
        "buddy",
        "mate",
        "folks",
        "please",
        "and",
        "oh",
        "well",
        "just",
        "really",
    ]
)
# Function words (the project's one list) and the verbs of conversation: no research content.
NO_CONTENT_WORDS = (
    terms.STOPWORDS
    | terms.QUERY_EXTRA
    | frozenset(["go", "know", "less", "let", "let's", "lets", "say", "think", "yes"])
)
# Words that only point at something said earlier or at nothing in particular.
VAGUE = frozenset(
    [
        "stuff",
        "thing",
        "things",
        "something",
        "anything",
        "everything",
        "nothing",
        "info",
        "information",
        "details",
        "detail",
        "help",
        "question",
        "questions",
        "research",
        "topic",
        "subject",
        "continue",
        "more",
        "else",
        "other",
        "same",
        "one",
        "ones",
        "interesting",
        "idea",
        "ideas",
    ]
)
