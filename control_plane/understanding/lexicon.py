"""The reader's vocabulary: the words and phrases ``interpretation`` reads a question with.

Data only (plus the respelling of misspelt words against this vocabulary): relational cues with
their left and right roles (``VERBS``, ``NOUNS``), prepositional markers, scope words, question and
request words, lesson and plan words, and the closed-class words that make a word "explained".
Every phrase is stored normalised (``names.normalise``: lower case, singular), as the reader
compares token sequences. ``interpretation`` holds the grammar that uses them.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from control_plane.understanding.names import ARROW, normalise
from data_plane.relations import BUILDS_ON, PART_OF, PREREQUISITE

__all__ = [
    "ABOUT",
    "ABOUT_COPULAS",
    "ADVERBS",
    "AFTER_MARKERS",
    "AFTER_VERBS",
    "ANSWER_WORDS",
    "APPOSITIVE",
    "ARGUMENT_PREPOSITIONS",
    "ASKED",
    "AUX_START",
    "BARE",
    "BASIS_VERBS",
    "BEFORE_MARKERS",
    "BEFORE_WORDS",
    "BETWEEN_PROFORMS",
    "BOTH",
    "BUILD",
    "CALENDAR",
    "CAUSAL",
    "CLAUSE_SUBJECT",
    "COMPLETING",
    "COMPOUND_SUFFIXES",
    "CONCEPT_KINDS",
    "CONTAINER",
    "CONTRAST",
    "COPULA",
    "COUNT_WORDS",
    "COVERING",
    "COVERING_VERBS",
    "DASH_END",
    "DEMONSTRATIVES",
    "DEP",
    "DETERMINERS",
    "DIRECT",
    "EARLIER",
    "ENGLISH",
    "EXACT",
    "EXCEPT",
    "EXISTENTIAL",
    "EXPLAINED",
    "FIRST_PERSON",
    "FIRST_WORDS",
    "FOUND",
    "FRAMING",
    "FRONTED",
    "FUNCTION_WORDS",
    "GOALS",
    "HOLDERS",
    "HOW_FOLLOWERS",
    "INFINITIVE_LEADS",
    "INVERTING_AUX",
    "KNOWN_AFTER",
    "KNOWN_BEFORE",
    "KNOWN_FRAMES",
    "KNOWN_LEADS",
    "KNOWN_OPENERS",
    "KNOWN_VERBS",
    "LEARN",
    "LESSON",
    "LIGHT_VERBS",
    "LINKERS",
    "MAP_CONCEPT",
    "MAP_NOUNS",
    "MODALS",
    "NEEDED_FOR",
    "NEGATORS",
    "NEIGHBOUR",
    "NEXT_WORDS",
    "NOUNS",
    "NOUN_GAP",
    "NOUN_MODIFIERS",
    "NUMBERS",
    "ON_TOPIC",
    "OPENS",
    "ORDER_WORDS",
    "ORIGINS",
    "OTHER_SUBJECTS",
    "OWNERS",
    "OWN_CLAUSE",
    "PART",
    "PARTR",
    "PASSIVE_FLIP",
    "PATH",
    "PATH_END",
    "PATH_START",
    "PEOPLE",
    "PEOPLE_OR_DATES",
    "PERSONS",
    "PLACE",
    "PLACE_PROFORMS",
    "PLAN",
    "PLAN_NAMED",
    "POLITE",
    "POSSESSIVE",
    "PREPOSITIONS",
    "PREREQ",
    "PRONOUNS",
    "PURPOSE_VERBS",
    "READINESS",
    "RELATED_WORDS",
    "RELATION_NOUNS",
    "RELATION_PHRASES",
    "RELATION_WORDS",
    "RELATIVE",
    "RELATIVE_WORDS",
    "REMAINING",
    "REQUESTS",
    "REQUEST_AUX",
    "SCOPE_ADJECTIVES",
    "SENTENCE_END",
    "SLOT_END",
    "STARTS",
    "STRUCTURE_NOUNS",
    "SYMMETRIC",
    "TAUGHT",
    "THERE",
    "TIME_NOUNS",
    "TRANSITIVE",
    "TWO_PLACE",
    "VERBS",
    "VERB_LEADERS",
    "VERB_LIKE",
    "VOCABULARY",
    "WANT_SOMETHING",
    "WH",
    "WHOLE",
    "WHY_OPENERS",
    "YES_NO_AUX",
    "Cue",
    "cue",
    "everyday",
    "nameless",
    "respelt",
    "you_respelt",
]

# Families and roles.
LEARN, PREREQ, BUILD, PART = "learning", PREREQUISITE, BUILDS_ON, PART_OF

DEP, FOUND, WHOLE, PARTR = "dependent", "foundation", "whole", "part"

ADVERBS: Final = frozenset(
    {"directly", "immediately", "indirectly", "transitively", "ultimately", "eventually", "just", "also",
     "still", "only", "really", "actually", "mainly", "mostly", "even", "usually", "typically", "generally",
     "commonly", "necessarily", "then", "first", "right", "strictly", "conceptually", "straight", "finally",
     "now", "yet"}
)  # fmt: skip

DETERMINERS: Final = frozenset(
    {"the", "a", "an", "my", "our", "your", "this", "that", "these", "those", "both", "all", "some",
     "topic", "concept", "idea", "subject", "field", "whole", "entire"}
)  # fmt: skip

COPULA: Final = frozenset({"is", "are", "was", "were", "be", "been", "being", "get", "got"})

WH: Final = frozenset({"what", "which", "who", "whom", "where", "how", "anything", "something", "whatever"})

POSSESSIVE: Final = frozenset({"its", "their", "his", "her", "s"})

# What may stand between a concept and a noun in "X is a direct prerequisite", "X as a prerequisite".
NOUN_GAP: Final = frozenset(
    {"a", "an", "the", "is", "are", "was", "were", "be", "been", "as", "also", "listed", "one", "direct",
     "immediate", "key", "important", "necessary", "required", "considered", "itself", "core", "main", "named", "given", "stated", "recorded", "marked",
     "their", "its", "and", "indirect", "or", "concept", "topic", "all", "of", "serve", "act", "count",
     "function", "stand", "serves", "acts", "counts", "functions", "stands", "served", "acted", "counted",
     "functioned", "stood", "own", "grouped", "classed", "classified", "categorised", "categorized", "filed"}
)  # fmt: skip

# Head nouns a relational noun may modify: "the prerequisite list for X", "X's list of prerequisites".
CONTAINER: Final = frozenset(
    normalise("list set collection group lineup bunch tree chain graph map hierarchy")
)

# Prepositions of place: "prerequisites behind X" attaches X like "of X"; "underneath X as
# prerequisites" does not make X the prerequisite (the clause's subject is).
PLACE: Final = frozenset(
    normalise("behind beneath underneath below under above over beside around within inside")
)

AFTER_VERBS: Final = frozenset(normalise("have learn finish master complete unlock pass clear"))

CLAUSE_SUBJECT: Final = frozenset(
    normalise("i you they we one he she someone learner student can could should get start to even")
)

PRONOUNS: Final = frozenset({"it", "its", "them", "their"})

# Pro-forms of a place: "I know A. How do I get from there to B?" points back at A.
PLACE_PROFORMS: Final = frozenset({"there", "here"})

# "starting from scratch", "from zero", "from the ground up": where a learner starts when they know
# nothing, not a concept the graph lacks.
ORIGINS: Final = tuple(
    normalise(p) for p in ("scratch", "zero", "nothing", "nil", "the beginning", "the start", "square one",
                           "the ground up", "the bottom", "basics", "the basics",
                           "fundamentals", "the fundamentals", "ground level", "first principles")  # "the very start": _origin drops "very"
)  # fmt: skip


@dataclass(frozen=True)
class Cue:
    words: tuple[tuple[str, ...], ...]  # alternative token sequences
    family: str
    left: str
    right: str
    transitive: bool = False
    noun: bool = False


def cue(forms: str, family: str, left: str, right: str, transitive: bool = False, noun: bool = False) -> Cue:
    return Cue(tuple(normalise(f) for f in forms.split("|")), family, left, right, transitive, noun)


VERBS: Final = (
    cue("require|required|requiring|need|needed|needing|presuppose|presupposed|assume", LEARN, DEP, FOUND, True),
    # "X is necessary for Y": the adjective's subject comes first, what it is needed for after "for"
    cue("necessary|indispensable", LEARN, FOUND, DEP, True),
    cue("come next|coming next|what next", LEARN, FOUND, FOUND),
    cue("depend on|depended on|depending on|dependent on|depend of|depends of|depending of|rely on|relied on|relying on|come after|came after|"
         "coming after|follow|followed|following|succeed|trace back to|traces back to|traced back to|"
         "tracing back to", LEARN, DEP, FOUND),
    cue("build on top of|built on top of|build on|built on|building on|build upon|built upon|build off|"
         "rest on|rests on|rested on|resting on|stand on|stands on|"
         "based on|base on|based off|base off|grounded in|derived from|extend|extended|extending|use|used|using|make use of|"
         "draw on|draws on|founded on|grounded on|rooted in|erected on|erect on",
         BUILD, DEP, FOUND),
    # "stacked / layered / constructed on top of": whatever the verb, the picture is building
    cue("on top of|on the basis of|on the foundation of|on the foundations of", BUILD, DEP, FOUND),
    cue("come before|came before|coming before|precede|preceded|preceding|lead up to|led up to|"
         "leading up to", LEARN, FOUND, DEP, True),
    cue("lead to|led to|leading to|lead into|unlock|unlocked|unlocking|enable|enabled|enabling|open up|"
         "opened up|prepare for|prepare you for|prepare me for|feed into|pave the way for|allow",
         LEARN, FOUND, DEP),
    cue("underlie|underly|underlying|underlay|underpin|underpinned|underpinning|support|supported",
         BUILD, FOUND, DEP),
    cue("include|included|including|contain|contained|containing|comprise|comprised|consist of|"
         "consisting of|made of|made up of|composed of|break down into|broken down into|split into|divided into|divide into|divides into|"
         "cover|covered", PART, WHOLE, PARTR),
    cue("part of|belong to|belonged to|belonging to|belong in|belong inside|belong within|belong under|member of|make up|made up|makes up|sit in|sit under|sit within|sit inside|fall within|fit within|"
         "fall under|come under|comes under|came under|coming under|fit into|fit in|fold into|folds into|folded into|component of|piece of|element of|subtopic of|constitute|constitutes|"
         "constituted|constituting", PART, PARTR, WHOLE),
)  # fmt: skip

# Nouns a learner uses for "topics" in general ("the later stuff", "earlier material").
_TOPIC_NOUNS: Final = ("topic", "concept", "material", "stuff", "one", "subject", "idea", "thing", "area", "skill",
                       "step", "content", "piece", "part", "bit", "item")  # fmt: skip

# Nouns: the role of a concept after "<noun> of/for X" (``right``) or "X is a <noun>" (``left``).
NOUNS: Final = (
    # "X's dependencies" (a developer's word): what X depends on, its prerequisites
    cue("prerequisite|prereq|pre requisite|requirement|dependency|dep", PREREQ, FOUND, DEP, noun=True),
    cue("foundation|basis|base|building block|underpinning", BUILD, FOUND, DEP, noun=True),
    # what must be laid down before X, in learning order ("X's groundwork, everything before it")
    cue("background|grounding|groundwork|footing", LEARN, FOUND, DEP, True, noun=True),
    cue("dependent|successor|follow up|next step|consequence", LEARN, DEP, FOUND, noun=True),
    # "the later / earlier topics" are downstream / upstream of the concept the question names
    # (the adjective before a topic noun only: "I'll do X later" is about the learner)
    cue("downstream|descendant|further along|everything later|"
        + "|".join(f"{a} {n}" for a in ("later", "subsequent") for n in _TOPIC_NOUNS),
        LEARN, DEP, FOUND, True, noun=True),
    cue("upstream|ancestor|" + "|".join(f"earlier {n}" for n in _TOPIC_NOUNS), LEARN, FOUND, DEP, True, noun=True),
    cue("part|component|piece|element|subtopic|sub topic|constituent|member|sub area|subarea|subfield|"
        "sub field|subdomain|sub domain", PART, PARTR, WHOLE, noun=True),
    # the whole a part sits in: "the parent topic of X", "the umbrella topic for X"
    cue("parent topic|parent concept|parent area|parent subject|umbrella topic|umbrella concept|umbrella term|"
        "umbrella area|umbrella subject|overarching topic|supertopic", PART, WHOLE, PARTR, noun=True),
)  # fmt: skip

# Adjectives saying what their subject is needed for ("X is necessary for Y").
NEEDED_FOR: Final = frozenset(normalise("necessary indispensable"))

PASSIVE_FLIP: Final = frozenset(
    normalise("required needed used unlocked enabled preceded followed included contained comprised "
              "supported underpinned presupposed assumed extended covered")
)  # fmt: skip

# Prepositional markers just before a concept: (token sequence, family, role, transitive).
BEFORE_MARKERS: Final = tuple(
    normalise(m)
    for m in (
        "before",
        "before of",  # a learner's "before of X" for "before X"
        "prior to",
        "earlier than",
        "ahead of",
        "in preparation for",
        "end at",
        "ending at",
        "path to",
        "way to",
        "road to",
        "between me and",  # "what stands between me and X"
    )
)

AFTER_MARKERS: Final = tuple(normalise(m) for m in ("after", "beyond", "past", "later than", "further along from", "further on from"))  # fmt: skip

PURPOSE_VERBS: Final = frozenset(
    normalise("learn understand study master tackle know grasp start reach arrive approach get do build use "
              "read follow take begin work apply learning understanding studying mastering tackling starting "
              "reaching approaching getting doing taking beginning working attempting diving moving jumping "
              "picking covering commence commencing embark embarking undertake undertaking enrol enroll "
              "enrolling register registering sign signing touch touching")
)  # fmt: skip

# What a learner has done with what they know: learnt it, or, on a catalogue, taken or passed it.
KNOWN_VERBS: Final = frozenset(normalise("know knew known knowing learned learnt mastered studied covered completed done finished understand understood took taken passed revised reviewed"))  # fmt: skip

EXCEPT: Final = tuple(normalise(m) for m in ("except", "but not", "excluding", "other than", "apart from", "besides", "not including", "not counting", "without", "minus", "leave out", "leaving out", "skip", "skipping"))  # fmt: skip

APPOSITIVE: Final = tuple(normalise(m) for m in ("like", "such as", "e g", "eg", "aka", "also known as", "called", "named", "i e", "ie"))  # fmt: skip

DIRECT: Final = tuple(normalise(m) for m in ("direct", "directly", "immediate", "immediately", "right before", "just before", "right after", "just after", "one step", "first order", "next", "straight"))  # fmt: skip

TRANSITIVE: Final = tuple(normalise(m) for m in ("at some point", "sooner or later", "indirect", "indirectly", "transitive", "transitively", "all the way", "everything", "full", "whole", "entire", "complete", "ultimately", "eventually", "down the line", "recursive", "recursively", "every", "chain of", "in total", "altogether", "overall", "tree", "hierarchy", "further", "any distance", "any depth", "any level", "chain", "many steps", "all of it", "way later", "way after", "closure",
                                                        "several steps", "multiple steps", "few steps", "steps away", "steps later", "steps further", "in the end", "in the long run", "however far", "far ones", "distant ones", "far away ones",))  # fmt: skip

# Nouns for the map itself ("skill tree", "hierarchy"): transitive only when no word says
# "directly"/"immediately".
STRUCTURE_NOUNS: Final = frozenset(normalise("tree hierarchy chain"))

# Nouns of time after "next" ("next term", "next week"): a time, not "what comes next".
TIME_NOUNS: Final = frozenset(
    normalise("second minute hour day week weekend month term semester quarter year time session")
)

BOTH: Final = tuple(normalise(m) for m in ("both", "in common", "common", "shared", "share"))

LESSON: Final = frozenset(
    normalise("lesson course module unit class tutorial chapter lecture session coursework")
)
# Nouns a curriculum uses for its units: lessons on a map that has lessons, and the map's concepts
# on one that does not (a course catalogue's "which courses need MATH 20C?" asks for concepts).
# The reader reads them, there, as its own word for a concept (``MAP_CONCEPT``).
MAP_NOUNS: Final = frozenset(normalise("course class module unit"))
MAP_CONCEPT: Final = "concept"

PLAN: Final = tuple(normalise(m) for m in ("study plan", "learning plan", "plan", "roadmap", "road map", "what order", "which order", "in order", "learning order", "sequence", "syllabus", "schedule", "step by step", "order should"))  # fmt: skip

# A plan asked for by name: what the learner knows is left out of it, not where a path starts.
PLAN_NAMED: Final = tuple(normalise(m) for m in ("study plan", "learning plan", "plan"))

PATH: Final = tuple(normalise(m) for m in ("path", "route", "chain", "connect", "connects", "bridge", "get from", "go from", "lead to", "leads to", "trace", "journey", "way from", "in between"))  # fmt: skip

# "what lies between them / the two": "between" with a pro-form for two places named before; a
# path unless the words ask how the two differ or relate ("the difference between them").
BETWEEN_PROFORMS: Final = tuple(normalise(m) for m in ("between them", "between the two", "between those", "between these", "between both"))  # fmt: skip

CONTRAST: Final = tuple(normalise(m) for m in ("contrast", "contrasted", "contrasting", "contrasts", "versus", "vs", "alternative", "opposite", "opposing", "opposed", "difference", "differ", "compare", "compared", "comparison", "instead of", "rather than", "trade off", "competing", "compete", "set against", "pitted against", "juxtaposed", "juxtapose", "opposition", "counterpart", "rival", "weighed against"))  # fmt: skip

RELATED_WORDS: Final = tuple(
    normalise(m)
    for m in (
        "related",
        "relate",
        "associated",
        "similar",
        "relevant",
        "relation",
        "relationship",
        "go together",
        "goes together",
        "hand in hand",
        "tie in",
        "ties in",
        "tied in",
        "see also",
    )
)

NEIGHBOUR: Final = tuple(normalise(m) for m in ("connected", "linked", "link", "adjacent", "neighbour", "neighbor", "neighbourhood", "neighborhood", "vicinity", "hop", "next to", "touch"))  # fmt: skip

# What marks a path's start and its end: "starting at A", "from A"; "ending at B", "my goal is B".
PATH_START: Final = (
    normalise("from"),
    normalise("starting point"),
    # a journey told as steps ("step 1 is A, the final step is B")
    *(normalise(f"{first} is") for first in ("step 1", "step one", "first step")),
    # a starting verb, its particle if any ("start out at", "starting off with"), a preposition
    *(
        normalise(f"{verb} {particle} {prep}")
        for verb in ("starting", "start", "beginning", "begin")
        for particle in ("", "out", "off")
        for prep in ("at", "from", "with")
    ),
)

PATH_END: Final = tuple(normalise(m) for m in ("final step is", "last step is", "ending at", "end at", "ending with", "end with", "finishing at", "finish at", "finish with", "goal is", "aim is", "target is", "objective is", "reach", "arriving at", "arrive at", "end up at", "end up with", "end up in", "destination"))  # fmt: skip

# "how do I get to B": a goal only right before the concept ("get to grips with", "get to know"
# are idioms, so these are not path ends that take unknown words).
GOAL_REACH: Final = tuple(normalise(m) for m in ("get to", "getting to"))

ABOUT: Final = tuple(normalise(m) for m in ("what is", "what are", "what s", "who is", "tell me about", "tell me more about", "explain", "describe", "define", "definition", "overview", "summary", "summarise", "summarize", "mean", "about", "info", "information", "introduce", "introduction", "explanation", "description", "rundown", "gist", "primer", "basics", "eli5", "intro", "lowdown", "nutshell", "in simple terms", "in simple words", "in plain words", "in plain english", "in plain terms", "in plain language", "meaning", "explained", "tl dr", "tldr", "refer to", "stand for", "involve", "entail"))  # fmt: skip

EXACT: Final = normalise("exactly")

NUMBERS: Final = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}

ENGLISH: Final = frozenset(
    normalise("what which who how where when why is are was were do doe did does the a an of to for in on "
              "before after and or i me my we you it its that this with from by can should must need tell "
              "show give list name explain describe have has had come learn know about all any there be which "
              "concept topic lesson take make study plan order till until upto unto already")
)  # fmt: skip

AUX_START: Final = frozenset(
    normalise("is are was were do doe did does can could should would will must has have had may might "
              "tell show give list name explain describe define make find help walk plan suggest recommend "
              "please i which what who how where when why whats")
)  # fmt: skip

VERB_LIKE: Final = frozenset(
    normalise("is are was were be been do doe did has have had will would can could should must")
)

# Two-place frames: an opener, then one slot, a joiner, then the other slot ("from A to B",
# "between A and B", "connect A to B"). Each slot should hold a concept.
TWO_PLACE: Final = (
    (frozenset({"from"}), frozenset({"to", "towards", "toward"})),
    (frozenset({"between"}), frozenset({"and"})),
    (
        frozenset(normalise("connect connecting link linking bridge bridging join joining")),
        frozenset({"to", "and", "with"}),
    ),
)

INVERTING_AUX: Final = frozenset(normalise("does do did can could would will might may should"))

SLOT_END: Final = frozenset({"in", "for", "?", ".", ",", "!", ";", ":"})

# (in the gap between two words: a dot with no space after it is inside a word: "2.0", "Node.js")
SENTENCE_END: Final = re.compile(r"[.?!;]+\s|[?!;]+$")
# A dash set off by spaces before a new question ("In a mix everything sits on the low end — so
# what is X based on?") ends a sentence too; before an apposition ("first — the ones that...")
# it does not, and neither does a hyphen ("X - prerequisites?").
DASH_END: Final = re.compile(r"(?<=\s)(?:[—–]|--)\s")

SCOPE_ADJECTIVES: Final = frozenset(
    normalise("direct immediate indirect full complete entire whole transitive all")
)

# Adjectives that may stand between a name and its relational noun without changing what is
# asked ("X - underlying foundations?", "X essential prerequisites").
NOUN_MODIFIERS: Final = frozenset(
    normalise("underlying required needed necessary essential key core main basic fundamental mandatory")
)

ABOUT_COPULAS: Final = tuple(normalise(m) for m in ("what is", "what are", "what s", "whats", "who is"))

BARE: Final = frozenset(normalise("what s is are who the a an"))

WANT_SOMETHING: Final = tuple(
    (verb, det)
    for verb in normalise("want like need appreciate")
    for det in normalise("the a an all every everything complete full whole list")
)

# Greetings, politeness and the fillers of spoken or dictated text ("um so what is X").
POLITE: Final = frozenset(
    normalise("kindly please pls hi hello hey hiya so ok okay quick question dear um uh uhm erm hmm")
)

REQUESTS: Final = frozenset(
    normalise(
        "provide enumerate state outline summarise summarize identify map lay break name list show give tell "
        "find point recommend suggest indicate specify mention detail display fill"
    )
)

# What may stand between X and a noun in "have X somewhere in their prerequisite chain".
HOLDERS: Final = frozenset(normalise("in among somewhere anywhere their its"))

# Verbs of position that carry no relation of their own: "what parts are coming inside X",
# "X is coming as one part", "which topics sit under X".
LIGHT_VERBS: Final = frozenset(
    normalise("come comes coming came sit sits sitting fall falls falling lie lies lying go goes going")
)

BEFORE_WORDS: Final = frozenset({"before", "prior"})

# "the concepts for which X serves as the base they build on": "they" is the verb's subject.
OTHER_SUBJECTS: Final = frozenset({"they", "i", "you", "we", "he", "she", "one"})

# A verb whose subject is a person is the learner's ("I need ..."), not a relation between concepts;
# these may stand between the person and the verb.
PERSONS: Final = frozenset({"i", "we", "you", "she", "he", "they", "m"})
# People a learner speaks of: "if a student masters X, what does that open up for them?" - "for
# them" is the student, not X.
PEOPLE: Final = frozenset(
    normalise("student students learner learners person persons someone somebody anyone anybody pupil pupils kid kids child children son daughter team "
              "class trainee trainees intern interns colleague colleagues friend friends people staff "
              "employee employees beginner beginners newcomer newcomers junior juniors hire hires")
)  # fmt: skip
VERB_LEADERS: Final = ADVERBS | {"would", "will", "do", "really", "also"}

FIRST_WORDS: Final = tuple(
    normalise(m)
    for m in (
        "first",
        "earlier",
        "beforehand",
        "in advance",
        "ahead of time",
        "be ready",
        "get ready",
        "be prepared",
    )
)

DEMONSTRATIVES: Final = frozenset({"this", "that", "these", "those"})

FIRST_PERSON: Final = frozenset({"i", "me", "my", "we", "our", "im", "m", "here", "ve"})

RELATIVE: Final = frozenset({"that", "who"})

# With and without the apostrophe chat drops ("dont want the whole tree").
NEGATORS: Final = frozenset(
    normalise(
        "not no nothing none never without excluding don t isn aren dont doesnt didnt isnt arent wont cant"
    )
)

OWNERS: Final = frozenset({"the", "its", "their", "those", "these", "s", "his", "her", "of", "for", "own"})

KNOWN_FRAMES: Final = tuple(normalise(m) for m in ("familiar with", "comfortable with", "already know", "i know", "i ve learned", "i ve learnt", "i ve mastered", "i ve done", "i ve covered", "i ve studied", "i ve got", "am knowing", "m knowing", "i m at", "im at", "i am at", "i did", "we did"))  # fmt: skip
# More words that, right before a name, say the learner knows it ("given my knowledge of A", "I
# already have A", "just wrapped up A"); only where a name follows (a slot after them that names
# nothing is not read as an unknown topic: "lessons I should already have done").
KNOWN_LEADS: Final = tuple(
    normalise(m)
    for m in ("knowledge of", "already have", "picked up", "wrapped up", "fine with", "good with", "ok with",
              "okay with", "done with", "through with", "solid on", "solid with", "credit for")
)  # fmt: skip
# Every phrase that, right before a name, says the learner knows it (the one list both the known
# concepts of a question and a context sentence's are read with).
KNOWN_BEFORE: Final = (*KNOWN_FRAMES, *KNOWN_LEADS)

ARGUMENT_PREPOSITIONS: Final = frozenset(normalise("for of before after about on to into towards toward"))

# English prepositions, a closed class: never part of a concept's name ("set against X").
PREPOSITIONS: Final = frozenset(
    normalise("about above across after against along amid among around as at before behind below beneath "
              "beside besides between beyond by despite down during except for from in inside into like near "
              "of off on onto opposite out outside over past per since than through throughout till to "
              "toward towards under underneath unlike until up upon versus via with within without")
)  # fmt: skip

# -- question forms (``forms``) ----------------------------------------------------------------

# What the learner says is their goal, right before its name ("I want to get to X", "goal: X").
GOALS: Final = tuple(
    normalise(m)
    for m in ("get to", "reach", "want to learn", "want to study", "want to understand", "goal is", "goal",
              "target is", "target", "aim is", "aiming for", "aim for", "work towards", "working towards",
              "heading for", "end up at")
)  # fmt: skip
# What follows the names the learner knows ("got A and B covered", "with A under my belt").
KNOWN_AFTER: Final = tuple(
    normalise(m)
    for m in (
        "covered",
        "down",
        "done",
        "under my belt",
        "nailed",
        "sorted",
        "already",
        "mastered",
        "behind me",
    )
)
# The openers of a learner's own clause with no subject ("have A and B", "finished A", "Known: A").
OWN_CLAUSE: Final = frozenset(
    normalise("have got finished completed done known know knowing studied learned learnt")
)
# What opens a list of what the learner knows ("I know A, B", "have A and B").
KNOWN_OPENERS: Final = OWN_CLAUSE | KNOWN_VERBS | frozenset(normalise("know knew"))
# Words that link or soften a clause and never stand for a topic ("..., so I can", "..., please").
LINKERS: Final = POLITE | frozenset(
    normalise("so but because then also too though although yet just since given")
)


# -- the whole question accounted for (``accounting``) -------------------------------------------

# Closed-class English, the words that name nothing: determiners and quantifiers, pronouns,
# question words, conjunctions, auxiliaries and modals (with the pieces contractions leave:
# "don't" -> "don", "t"), prepositions, negation, small numbers, greetings and thanks. Not part of
# ``VOCABULARY`` (misspelt words are respelt against that), only of what accounts for a word.
FUNCTION_WORDS: Final = frozenset(
    normalise("""
    a an the this that these those my your his her its our their whose which what whatever
    whichever each every either neither any some no none all both half several many much more most
    few fewer less least little enough such other another own same i me myself mine you yourself
    yours yourselves he him himself she herself hers it itself they them themselves theirs we us
    ourselves ours one ones oneself someone somebody something anyone anybody anything everyone
    everybody everything nobody nothing where when why how whether if unless whereas while though
    although because since until till as than so then there here now ever never always often
    sometimes once twice again also too very quite rather somewhat really just only even still yet
    already soon else instead otherwise anyway perhaps maybe somewhere anywhere everywhere nowhere
    and or nor but be am is are was were been being have has had having do does did doing will
    would shall should can could may might must ought s t d ll ve re m don doesn didn isn aren wasn
    weren won wouldn shouldn couldn cannot haven hasn hadn let lets not yes yeah yep nope zero two
    three four five six seven eight nine ten second third please thanks thank cheers ok okay well
    oh ah hey hi hello um uh hmm btw pls thx tho etc eg ie incl vs wanna gotta gonna kinda sorta
    lemme gimme single self to of in on at by for with from
    about into onto upon over under through between among within without against
    """)
)

# Words that frame the asking or the learner's situation and relate no concepts: "I was wondering
# which ...", "kind of curious how far ...", "I keep hearing about X", "roughly speaking", "quick
# q:", "in a sentence or two", "which larger topic is X part of" (the form's words place X).
FRAMING: Final = frozenset(
    normalise("""
    wonder wondering wondered curious interested keen hope hoping try trying tried plan planning
    decide deciding figure figuring think thinking consider considering hear hearing heard see
    seeing seen read reading keep keeps kept look looking prepare preparing prepping prep kind sort
    roughly speaking basically honestly quick q brief briefly short simple simply sentence larger
    broader bigger wider smaller narrower counting clue grips existing account sense
    ordered form forms moment concise plot sir madam grateful afternoon morning evening worth
    obvious notions lol
    """)
)

# The kinds a question may call the concepts it asks for ("which methods does X build on?",
# "which prompting styles are prerequisites?"): the graph holds no kinds, so the answer is the
# concepts themselves; unlike a thing that is no concept ("which careers use X?").
CONCEPT_KINDS: Final = frozenset(
    normalise("""
    method methods technique techniques approach approaches algorithm algorithms model models style
    styles type types kind kinds variant variants metric metrics measure measures tool tools
    framework frameworks strategy strategies architecture architectures procedure procedures
    principle principles theory theories family families category categories discipline
    disciplines skill skills
    """)
)

# The calendar's names ("I'm starting X on Monday", "by March"): when, never what.
CALENDAR: Final = frozenset(
    normalise("""
    monday tuesday wednesday thursday friday saturday sunday weekend weekends january february march
    april may june july august september october november december tonight tomorrow today
    """)
)

# What a readiness question may say of the learner and the goal ("am I allowed to take Y", "would
# I be cleared for Y"): the ready form reads the question by its shape, these words by its meaning.
READINESS: Final = frozenset(normalise("ready prepared allowed permitted cleared eligible qualified"))

# The verbs of "stacked / layered / constructed on top of X", "worked out on the basis of X": the
# phrase after them says the relation.
BASIS_VERBS: Final = frozenset(normalise("stacked layered constructed placed put worked developed"))


def nameless(token: str) -> bool:
    """Could ``token`` be a word of a topic's name the graph lacks: a word no vocabulary here
    explains, not a linking or polite word, not an adverb in -ly ("loosely")?"""
    return token.isalpha() and token not in VOCABULARY and token not in LINKERS and not token.endswith("ly")


# What a question that asks what is still left says ("what's left", "what remains", "what else").
REMAINING: Final = frozenset(
    normalise("left remain remains remaining remainder rest else still missing outstanding gap")
)

# Auxiliaries that open a yes/no question ("does" normalises to "doe").
YES_NO_AUX: Final = frozenset(
    normalise("is are was were am do does did can could should would will must may might shall has have")
)
# "can you / could you / would you (please) tell me ...": a request, not a yes/no question ...
REQUEST_AUX: Final = frozenset(normalise("can could would will"))
# ... made of someone: "can you / can someone / could anybody (tell me ...)".
ASKED: Final = frozenset(normalise("you u ya someone somebody anyone anybody"))
# Existential "is there / are there (any)": asks for the things, not yes or no.
THERE: Final = frozenset(normalise("there"))
# Words that ask which of two comes first ("which first, A or B", "A or B earlier?").
ORDER_WORDS: Final = tuple(
    normalise(m)
    for m in ("first", "earlier", "sooner", "start with", "begin with", "starting with", "beginning with",
              "start by", "come first", "go first", "goes first", "what order", "which order", "in order",
              "precede", "sequence", "right order", "correct order", "best order")
)  # fmt: skip
# "A before B, or the other way round?": both orders offered.
SYMMETRIC: Final = tuple(
    normalise(m)
    for m in ("the other way around", "the other way round", "other way around", "other way round",
              "vice versa", "the reverse", "the opposite order", "or after", "or before", "or later")
)  # fmt: skip
# Finishing a concept, said as a gerund ("what does finishing X unlock", "passing X"): the learner
# will have it.
COMPLETING: Final = frozenset(normalise("finishing completing passing mastering clearing"))
# What a learner's own completion makes possible: a verb of making or becoming with a word of
# possibility ("make possible", "makes available", "become open"), or "open up".
OPENS: Final = (
    *(
        normalise(f"{verb} {what}")
        for verb in ("make", "makes", "made", "become", "becomes", "became")
        for what in ("possible", "available", "accessible", "open")
    ),
    *(normalise(m) for m in ("open up", "opens up", "opened up")),
)
# Where to begin ("where do I start", "where should I begin", "the first step towards").
STARTS: Final = frozenset(normalise("start begin starting beginning"))

# Ordering words that ask for one of two ("which one comes earlier?"), not for the steps between.
EARLIER: Final = tuple(normalise(m) for m in ("earlier", "first", "sooner", "come first", "goes first"))
# Words of relation in "how are A and B related" ("different" too: how they differ in the graph).
RELATION_WORDS: Final = frozenset(
    normalise(
        "related relate relates relating relation relationship connected connection linked tied different "
        "differ similar"
    )
)
RELATION_PHRASES: Final = tuple(
    normalise(m)
    for m in ("fit together", "go together", "tie together", "tie in", "to do with",
              "relative to each other", "relative to one another")
)  # fmt: skip
# Nouns that, before "between", ask how two things relate ("the connection between A and B").
RELATION_NOUNS: Final = frozenset(normalise("relation relationship connection link tie"))
# What opens a why question ("why", "how come", "what's the reason", "what makes X necessary").
WHY_OPENERS: Final = tuple(
    normalise(m)
    for m in ("why", "how come", "what make", "what makes", "what is the reason", "what s the reason",
              "whats the reason", "for what reason", "what s the point", "whats the point",
              "what is the point")
)  # fmt: skip
# "how many", "the number of": a count.
COUNT_WORDS: Final = tuple(
    normalise(m)
    for m in (
        "how many",
        "the number of",
        "total number of",
        "what number of",
        "count of",
        "how big",
        "how large",
        "the size of",
        "size of",
    )
)
# What a question asking what to learn next says ("what now?", "what can I learn next?").
NEXT_WORDS: Final = frozenset(
    normalise(
        "next now then after learn study tackle take move unlock unlocked open ready step qualify eligible"
    )
)
# What may follow "how" in a question the graph can answer ("how do ...", "how many", "how far",
# "how X leads to Y"): auxiliaries, persons and a few degree words of its own. Anything else asks
# for a degree the graph does not record ("how long", "how hard", "how useful").
HOW_FOLLOWERS: Final = YES_NO_AUX | frozenset(
    normalise("i we you it they he she one to come many much far exactly about would will are is be")
)
# Question words asking for people or dates, which the graph does not record.
PEOPLE_OR_DATES: Final = frozenset(normalise("who whom whose when"))
# Words that make a one-concept yes/no question ask whether a set is empty ("does X need anything?").
EXISTENTIAL: Final = frozenset(normalise("any anything something else"))
_FORM_WORDS: Final = frozenset(
    w
    for table in (ORDER_WORDS, SYMMETRIC, RELATION_PHRASES, WHY_OPENERS, COUNT_WORDS, GOALS, KNOWN_AFTER)
    for phrase in table
    for w in phrase
) | YES_NO_AUX | RELATION_WORDS | RELATION_NOUNS | NEXT_WORDS | EXISTENTIAL | PEOPLE_OR_DATES | REMAINING  # fmt: skip


EXPLAINED: Final = frozenset(
    PREPOSITIONS
    | DETERMINERS
    | ADVERBS
    | CLAUSE_SUBJECT
    | PRONOUNS
    | PURPOSE_VERBS
    | ENGLISH
    | LESSON
    | WH
    | {w for c in (*VERBS, *NOUNS) for phrase in c.words for w in phrase}
    | {ARROW}
)

VOCABULARY: Final = EXPLAINED | {
    w
    for table in (PATH, PLAN, CONTRAST, RELATED_WORDS, NEIGHBOUR, ABOUT, BEFORE_MARKERS, AFTER_MARKERS,
                  PATH_START, PATH_END, TRANSITIVE, DIRECT, EXCEPT, APPOSITIVE, KNOWN_FRAMES, BOTH)
    for phrase in table
    for w in phrase
} | KNOWN_VERBS | _FORM_WORDS  # fmt: skip


# The words the system's own answers and prompts talk about graphs in ("(from prerequisite
# edges)", "no learning path", "in learning order: first ..."): with the reader's vocabulary, the
# words a concept's name may share with the system's own sentences.
ANSWER_WORDS: Final = frozenset(
    normalise(
        "edge edges graph graphs node vertex path paths chain concept concepts relation relations "
        "relationship learning order stage stages step steps first then last next direct directly "
        "indirect indirectly through via none nothing set sets list count number part parts whole "
        "lesson lessons evidence answer question known unknown ready needs need time year years "
        "class share reach build builds built left right "
    )
)


# One-letter words of English text ("a", "I") and of its contractions ("don't", "I'm", "I'd").
ONE_LETTER_WORDS: Final = frozenset("aistmd")


def everyday(phrase: str) -> bool:
    """Is the normalised ``phrase`` (a concept's name) one a text may use as plain words: every
    word of it a word of the reader's vocabulary or of the system's answers ("Edge", "Order",
    "Next step", "A")? Such a name is taken as a name only where the text sets it apart as one
    (``evals.coverage``, ``reader``). Other one-letter names ("C", "R", "x") are names."""
    words = phrase.split()
    return bool(words) and all(w in VOCABULARY or w in ANSWER_WORDS or w in ONE_LETTER_WORDS for w in words)


def _by_first_letter(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for word in sorted(words):
        out.setdefault(word[0], []).append(word)
    return {letter: tuple(ws) for letter, ws in out.items()}


# What a misspelt word may become: a word of five letters or more anything in the vocabulary of
# that length; a shorter one only a function word ("frm" -> "from").
_SPELLINGS: Final = _by_first_letter(w for w in VOCABULARY if len(w) >= 5)
_SHORT_SPELLINGS: Final = _by_first_letter(w for w in ENGLISH | WH if 4 <= len(w) <= 6)
# The relations' own words of five letters: the only targets of a four-letter misspelling that
# drops a vowel (a wider target set turns real words into others: "ever" -> "every").
_RELATION_WORDS_OF_FIVE: Final = frozenset(
    w for c in (*VERBS, *NOUNS) for phrase in c.words for w in phrase if len(w) == 5
)


# Words that turn "<name>-<word>" into an adjective of a longer name ("RAG-based search",
# "GPT-style decoding"): with an unexplained noun after them, the graph lacks what is named.
COMPOUND_SUFFIXES: Final = frozenset(
    normalise("based style like driven powered oriented centric specific aware enabled free heavy first")
)

# Causal adjuncts: "which topics open up because of X" (X is the cause, not the verb's object).
CAUSAL: Final = tuple(
    normalise(m) for m in ("because of", "thanks to", "due to", "owing to", "as a result of")
)

# Chat shorthand: the word each stands for.
# (No one-letter ones: "für" splits into "f" and "r", and "r" is no English "are" there.)
SHORTHAND: Final = {"b4": "before", "wot": "what", "wat": "what", "wht": "what", "ur": "your",
                    "thru": "through", "abt": "about", "bc": "because", "w": "with", "r": "are",
                    "u": "you", "1st": "first"}  # fmt: skip


# Verbs whose "to" marks an infinitive ("need to master", "have to study"), not a preposition.
INFINITIVE_LEADS: Final = frozenset(
    normalise("need needs needed have has had want wants wanted going able got ought used try trying "
              "hope hoping plan planning like love wish")
)  # fmt: skip

# Modals: "I must have covered X" asks what should be done; it says nothing was.
MODALS: Final = frozenset(normalise("must should would could might may need ought to"))


def you_respelt(toks: Sequence[str], masked: Collection[int] = ()) -> tuple[str, ...]:
    """Chat's one-letter "u" as "you" where it stands for the pronoun: after an auxiliary or before
    a word this module knows ("could u tell me", "u know"). Left alone elsewhere ("U-Net", "u.s.")."""
    out = list(toks)
    for i, t in enumerate(toks):
        if t != "u" or i in masked:
            continue
        after = toks[i + 1] if i + 1 < len(toks) and i + 1 not in masked else ""
        if (i > 0 and toks[i - 1] in VERB_LIKE) or after in VOCABULARY:
            out[i] = "you"
    return tuple(out)


# Irregular verbs by their stem, to their past participle: a learner may write "teached" or
# "builded" for "taught" or "built".
_REGULARISED: Final = {
    "build": "built", "teach": "taught", "lead": "led", "make": "made", "take": "taken", "understand":
    "understood", "know": "known", "begin": "begun", "write": "written", "hold": "held", "find": "found",
    "give": "given", "show": "shown", "come": "come", "go": "gone", "get": "got",
    "bring": "brought", "think": "thought", "rise": "risen", "grow": "grown", "stand": "stood",
}  # fmt: skip


@functools.cache
def _words_like_the_vocabulary() -> frozenset[str]:
    """English words (pyspellchecker's frequency list) that a vowel slip of a vocabulary word
    could be mistaken for ("continue" for "contain", "sample" for "simple"): a real word is
    never respelt into another. Read once, on the first slip; only these few words are kept."""
    from spellchecker import SpellChecker

    skeletons = {_skeleton(t) for ts in _SPELLINGS.values() for t in ts}
    english = SpellChecker(distance=1).word_frequency.dictionary
    return frozenset(w for w in english if len(w) >= 4 and w.isalpha() and _skeleton(w) in skeletons)


def _english(token: str) -> bool:
    """Is ``token`` (singular, as ``normalise`` makes it) an English word a slip could hide?"""
    words = _words_like_the_vocabulary()
    return token in words or f"{token}s" in words or f"{token}es" in words


def _skeleton(word: str) -> str:
    """The word's first letter and then its consonants, a doubled one once ("explain" and
    "explane" are "expln", "opposed" and "oposed" "opsd")."""
    out = [word[0]]
    for ch in word[1:]:
        if ch not in "aeiouy" and ch != out[-1]:
            out.append(ch)
    return "".join(out)


@functools.lru_cache(maxsize=8192)
def respelt(token: str) -> str:
    """``token``, or the word of this module's vocabulary it misspells ("prerequisits",
    "befor", "lessions", "frm"): same first letter, difflib ratio at least 0.9 (0.85 for a word of
    three or four letters, which only becomes a function word: "frm" -> "from", "wich" -> "which")."""
    if token in SHORTHAND:
        return SHORTHAND[token]
    if len(token) < 3 or token in VOCABULARY or not token.isalpha():
        return token
    targets = _SPELLINGS.get(token[0], ()) if len(token) >= 5 else _SHORT_SPELLINGS.get(token[0], ())
    # 0.9 for longer words: "instruction" is 0.87 from "introduction" and must stay itself
    close = difflib.get_close_matches(token, targets, n=1, cutoff=0.9 if len(token) >= 5 else 0.85)
    if close:
        return close[0]
    if token.endswith("ed") and (past := _REGULARISED.get(token[:-2]) or _REGULARISED.get(token[:-1])):
        return past  # an irregular verb given the regular ending: "teached", "builded", "maked"
    if len(token) >= 5:
        # A vowel slip or a doubled letter ("explane", "devided", "oposed"): the same consonants
        # in the same order, and still close.
        skeleton = _skeleton(token)
        slips = [
            t
            for t in difflib.get_close_matches(token, targets, n=3, cutoff=0.8)
            if _skeleton(t) == skeleton and abs(len(t) - len(token)) <= 1
        ]
        if len(slips) == 1 and not _english(token):
            return slips[0]
    if len(token) >= 5:  # two letters swapped ("subtopcis"): the same letters (a plural's too)
        letters = sorted(token)
        swapped = [t for t in targets if letters in (sorted(t), sorted(t + "s"))]
        if len(swapped) == 1:
            return swapped[0]
    if len(token) == 4:  # a vowel dropped from a five-letter relation word ("bilt" -> "built")
        dropped = [
            t
            for t in _RELATION_WORDS_OF_FIVE
            if t[0] == token[0] and any(t[k] in "aeiouy" and t[:k] + t[k + 1 :] == token for k in range(1, 5))
        ]
        if len(dropped) == 1:
            return dropped[0]
    return token


COVERING: Final = frozenset(normalise("that which cover covering teach teaching where in"))

ON_TOPIC: Final = frozenset({"on", "about", "for"})  # "lessons on X": only with the name right after

TAUGHT: Final = frozenset(
    normalise("covered taught explained discussed introduced treated bring brings brought")
)

COVERING_VERBS: Final = frozenset(
    normalise("cover covering teach teaching include explain deal discuss introduce go")
)

RELATIVE_WORDS: Final = frozenset({"that", "which"})

FRONTED: Final = frozenset(normalise("on upon of to from in into under"))
