"""The intent gate's word families in ten languages: harm subjects, operations, frames.

A request is judged by what it asks for, a subject times an operation (``policies.gate.harm``),
so the vocabulary is kept as families rather than sentences: the mass-harm subjects (chemical,
biological, nuclear and explosive weapons, weapons-grade material, an agent named by its effect
or source such as "a lethal toxin" or "the poison from castor beans"; self-spreading or evasive
malware), the operations that make an answer operational (make, synthesize, enrich, write; a
maker's nouns such as a materials list, a synthesis route or the code; getting past a named
defender), the amount that kills a person and the covert ways of giving it, and the frames that
make it a question *about* the subject (history, law, detection, treatment). Each
family covers English, Spanish, French, German, Portuguese, Italian, Russian, Chinese, Japanese
and Arabic, written as they read after ``text.confusables.normalize`` (case folded, "ß" as
"ss"). Latin and Cyrillic entries start at a word; Chinese, Japanese and Arabic ones match
anywhere (no spaces, or attached articles and prepositions).
"""

from __future__ import annotations

import re

_SPACED = re.compile(r"[a-z\u00c0-\u024f\u0400-\u04ff]")


def family(*entries: str) -> re.Pattern[str]:
    """One pattern for entries that are regex fragments; word-initial where words are spaced
    (judged by the first letter, so a group "(?:a|hasta) ..." starts at a word too)."""
    parts = [rf"(?<![^\W\d_]){e}" if _SPACED.match(e.lstrip("(?:")) else e for e in entries]
    return re.compile("(?:" + "|".join(parts) + ")")


# fmt: off
# --------------------------------------------------------------------------- mass-harm subjects

WEAPON = family(
    # English (and the agents' international names)
    r"nerve[\s-](?:agent|gas)", r"sar[ií]n", r"soman\b", r"tabun\b", r"cyclosarin", r"novichok",
    r"vx\b", r"mustard\s+gas", r"sulfur\s+mustard", r"lewisite", r"phosgene", r"chlorine\s+gas",
    r"poison\s+gas", r"toxic\s+gas", r"chemical\s+weapon", r"bio[\s-]?weapon",
    r"biological\s+weapon", r"anthrax", r"bacillus\s+anthracis", r"smallpox", r"variola",
    r"plague\s+bacteri", r"yersinia\s+pestis", r"ricin(?:e|s)?\b", r"abrin\b", r"botulinum", r"botulism",
    r"nuclear\s+(?:bomb|weapon|device|warhead)", r"atomic\s+bomb", r"dirty\s+bomb",
    r"weapons?[\s-]grade", r"bomb[\s-]grade", r"plutonium\s+pits?\b", r"weapons?[\s-]usable", r"highly[\s-]enriched",
    r"heu\b", r"(?:uranium|plutonium|u-?235|pu-?239)\b[^.?!;]{0,40}?\b(?:[89]\d|100)\s*(?:%|percent|per\s+cent)",
    r"(?:[89]\d|100)\s*(?:%|percent|per\s+cent)\s+(?:enriched\s+)?(?:uranium|u-?235)", r"bombs?\b", r"explosives?\b", r"explosive\s+device", r"ieds?\b",
    r"tatp\b", r"tnt\b", r"dynamite", r"anfo\b", r"hmtd\b", r"petn\b", r"rdx\b", r"semtex", r"nitroglycerin", r"napalm",
    r"thermite", r"molotov", r"detonators?\b", r"ghost\s+guns?", r"untraceable\s+(?:gun|firearm)",
    r"(?:more\s+)?(?:transmissible|contagious|lethal)\s+(?:virus|pathogen|strain|flu)",
    r"(?:virus|pathogen|strain|flu|influenza|bacteri\w*)\s+(?:\w+\s+){0,2}(?:more\s+)?"
    r"(?:transmissible|contagious|lethal|deadly|virulent)",
    r"transmissibility", r"gain[\s-]of[\s-]function",
    # Spanish, Portuguese, Italian
    r"agentes?\s+(?:nerviosos?|nervosos?|nervini?)", r"gas\s+(?:nervioso|nervino|mostaza)",
    r"gás\s+(?:nervoso|mostarda|sarin)", r"armas?\s+(?:qu[ií]micas?|biol[oó]gicas?)",
    r"armi\s+(?:chimiche|biologiche)", r"arma\s+(?:chimica|biologica)", r"[aá]ntrax", r"carbunco",
    r"antraz", r"antrace", r"ricin[ae]", r"bombas?\b", r"bombe\b", r"explosiv[oa]s?\b",
    r"esplosiv[oi]\b", r"iprite", r"artefactos?\s+explosivos?", r"ordigno",
    r"grado\s+(?:armament[íi]stico|militar|b[ée]lico|de\s+armas|per\s+armi)", r"apto\s+para\s+armas",
    r"calidad\s+militar", r"altamente\s+enriquecido", r"grau\s+(?:de\s+armas?|militar|b[ée]lico)",
    r"qualidade\s+militar", r"waffen(?:qualit|grad)",
    r"(?:uranio|plutonio|ur[âa]nio|plut[ôo]nio)\s+(?:[\w']+\s+){0,4}?(?:militar[e]?|b[ée]lico|armas?)\b",
    r"altamente\s+arricchito",
    # French
    r"agents?\s+neurotoxiques?", r"gaz\s+(?:neurotoxique|moutarde|sarin|toxique|de\s+combat)",
    r"yp[ée]rite", r"armes?\s+(?:chimiques?|biologiques?|nucl[ée]aires?)", r"bombes?\b",
    r"explosifs?\b", r"engins?\s+explosifs?", r"qualit[ée]\s+(?:militaire|armes?)",
    r"hautement\s+enrichi",
    # German ("Rohrbombe", "Atombombe": the compound ends in the weapon)
    r"nervenkampfstoff", r"nervengas", r"nervengift", r"senfgas", r"chemiewaffe",
    r"chemischen?\s+waffe", r"biowaffe", r"biologischen?\s+waffe", r"milzbrand", r"rizins?\b",
    r"\w*bomben?\b", r"sprengstoff", r"sprengsatz", r"sprengs[äa]tze", r"sprengk[öo]rper",
    r"waffenf[äa]hig", r"hoch\s?angereichert",
    # Russian
    r"зарин", r"зоман", r"нервно-паралитическ", r"отравляющ\w*\s+веществ", r"иприт",
    r"химическ\w*\s+оружи", r"биологическ\w*\s+оружи", r"ядерн\w*\s+(?:бомб|оружи)",
    r"сибирск\w*\s+язв", r"рицин", r"коктейл\w*\s+молотов", r"бомб(?:а|у|ы|ой|е|ам|ами|ах)?\b", r"взрывчат", r"взрывн\w*\s+устройств", r"боевы\w+\s+газ",
    r"оружейн\w*\s+(?:уровн|качеств|класс|уран|плутони|чистот)", r"высокообогащ",
    # Chinese, Japanese, Arabic
    "沙林", "梭曼", "塔崩", "神经毒", "芥子气", "光气", "毒气", "化学武器", "生物武器", "炭疽",
    "蓖麻毒素", "肉毒", "炸弹", "炸药", "爆炸物", "爆炸装置", "核弹", "原子弹", "核武器", "武器级",
    "高浓缩铀",
    "サリン", "ソマン", "タブン", "神経剤", "神経ガス", "マスタードガス", "毒ガス", "化学兵器",
    "生物兵器", "炭疽", "リシン", "ボツリヌス", "爆弾", "爆薬", "爆発物", "核兵器", "兵器級",
    "兵器用", "高濃縮ウラン",
    "سارين", "غاز الأعصاب", "غاز الاعصاب", "غاز الخردل", "الجمرة الخبيثة", "ريسين", "قنبل",
    "قنابل", "متفجر", "عبوة ناسفة", r"درجة\s+(?:صنع\s+)?(?:الأسلحة|الاسلحة|السلاح|عسكرية)",
    r"عالي\s+التخصيب", r"صالح\w*\s+(?:للأسلحة|للاسلحة|لصنع)", r"(?:سلاح|أسلحة|اسلحة)\w*\s+\w*(?:كيميائي|بيولوجي|نووي)",
    # Names only, in scripts the rules do not otherwise read: enough to keep such a request from
    # passing unjudged (Korean, Hindi, Hebrew, Greek, Persian, Thai)
    "사린", "신경가스", "신경작용제", "화학무기", "생물무기", "탄저", "폭탄", "폭발물",
    "सरीन", "बम", "विस्फोटक", "रासायनिक हथियार", "जैविक हथियार",
    "סארין", "פצצ", "חומר נפץ", "נשק כימי", "נשק ביולוגי",
    "σαρίν", "βόμβ", "εκρηκτικ", "χημικά όπλα", "βιολογικά όπλα",
    "سارین", "بمب", "مواد منفجره", "سلاح شیمیایی", "ซาริน", "ระเบิด", "อาวุธเคมี",
)

MALWARE = family(
    r"ransomware", r"key\s?loggers?", r"botnets?", r"computer\s+(?:virus|worm)", r"worms?\b",
    r"trojans?\b", r"malware", r"rootkits?", r"spyware", r"stalkerware", r"infostealers?",
    r"(?:credential|password)\s+stealers?", r"cryptojack", r"remote\s+access\s+trojan",
    r"viruse?s?\b", r"self[\s-](?:spreading|propagating|replicating)",
    r"(?:spreads?|copies|replicates|propagates|installs)\s+itself",
    r"(?:spreads?|propagates?|moves?)\s+(?:itself\s+|automatically\s+|on\s+its\s+own\s+)?"
    r"(?:to|across|through)\s+(?:\w+\s+){0,2}"
    r"(?:computers|machines|pcs|devices|hosts|network|contacts|contact\s+list|drives)",
    r"infects?\s+(?:\w+\s+){0,3}(?:computers|machines|pcs|devices|hosts|drives|files)",
    # es/pt/it/fr/de
    r"virus\s+inform[aá]tico", r"gusanos?\s+inform[aá]ticos?", r"troyanos?", r"v[íi]rus\b",
    r"vermes?\b", r"verme\s+informatico", r"cavalo\s+de\s+troia", r"ver\s+informatique",
    r"virus\s+informatique", r"logiciel\s+malveillant", r"ran[çc]ongiciel", r"cheval\s+de\s+troie",
    r"se\s+propag\w*", r"si\s+propag\w*", r"computerwurm", r"computervirus", r"schadsoftware",
    r"erpressersoftware", r"trojaner", r"sich\s+(?:selbst(?:st[äa]ndig)?\s+)?(?:im\s+\w+\s+)?"
    r"(?:verbreite|repliziert)",
    # ru, zh, ja, ar
    r"вирус", r"черв[ья]", r"вредонос", r"троян", r"кейлоггер", r"шифровальщик", r"самораспростран",
    "勒索软件", "恶意软件", "蠕虫", "木马", "病毒", "自我传播", "键盘记录",
    "ランサムウェア", "マルウェア", "ワーム", "トロイの木馬", "ウイルス", "自己増殖", "キーロガー",
    "برمجية خبيثة", "برنامج خبيث", "فيروس", "دودة", "فدية",
)

# A mass-harm agent named by its effect instead of its name ("a lethal toxin", "a weaponized
# pathogen", "ein tödliches Gift"): the description names the subject as the name would.
_AGENT = (
    r"(?:toxins?|poisons?|venoms?|pathogens?|bio-?agents?|germs?|bacteri\w*|viruse?s?|agents?"
    r"|chemicals?|gas(?:es)?)\b"
)
DESCRIBED_AGENT = family(
    rf"(?:lethal|deadly|fatal|killer|weaponi[sz]ed|weapons?[\s-]grade|military[\s-]grade"
    rf"|mass[\s-]casualty)\s+(?:[\w-]+\s+){{0,2}}?{_AGENT}",
    rf"weaponi[sz]\w*\s+(?:[\w'-]+\s+){{0,2}}?(?:{_AGENT}|diseases?|spores?)",
    # es, pt, it, fr
    r"(?:toxinas?|venenos?|pat[óo]genos?|agentes?|tossin[ae]|velen[oi]|patogen[oi]|toxines?"
    r"|poisons?|pathog[èe]nes?|agents?)\s+(?:\w+\s+)?(?:letal(?:es|i)?|mortal(?:es|is)?"
    r"|mortale|mortel(?:le)?s?|l[ée]tales?|mortif[eè]r\w*|armad[oa]s?)\b",
    # de, ru
    r"t[öo]dlich\w*\s+(?:gift|toxin|erreger|keim|virus|kampfstoff)", r"kampfstoff",
    r"(?:смертельн|смертоносн|боев)\w*\s+(?:токсин|яд|отрав|патоген|вирус|бактери|агент)",
    # zh, ja, ar
    "致命毒", "致命的毒", "致命病原", "致命病毒", "剧毒", "致死性の毒", "致死性の病原", "致命的な毒",
    "猛毒", r"(?:سم|سموم|ذيفان|ذيفانات)\s+(?:قاتل|مميت|فتاك)",
)

# What a mass-harm toxin is made from ("castor beans" for ricin, "rosary peas" for abrin): a
# subject only beside a word for the poison ("the toxin from castor beans"), never castor oil.
AGENT_SOURCE = family(
    r"castor\s+(?:beans?|seeds?|plants?)", r"rosary\s+peas?", r"jequirity", r"abrus\b",
    r"semillas?\s+de\s+ricino", r"semi\s+di\s+ricino", r"graines?\s+de\s+ricin",
    r"sementes?\s+de\s+mamona", r"mamona", r"rizinus(?:samen|pflanze)", r"клещевин",
    "蓖麻籽", "蓖麻子", "ヒマの種", "トウゴマ", "بذور الخروع",
)
POISON = family(
    r"toxin", r"poison(?!ing)", r"toxina", r"veneno", r"tossina", r"veleno", r"toxine", r"gift\b",
    r"токсин", r"яд\b", "毒素", "毒药", "毒物", r"(?:^|\s)(?:ال|بال)?سم(?=\s|$)", "ذيفان",
)

# Words of an everyday sense that would otherwise read as a subject or an operation: masked
# before judging.
EVERYDAY = family(
    r"code\s+(?:of\s+(?:conduct|practice|ethics|honou?r)|names?|words?)\b",
    r"(?:bath|seed|smoke|stink|glitter|confetti|paint|flavou?r|hot\s+chocolate|cocoa|chocolate"
    r"|cake|shower|fizz|photo|truth|water|love|f|time|cherry|calorie|salt|tea)[\s-]?bombs?\b",
    r"viruse?s?[\s-]free", r"bomb[\s-]?proof",
    r"bombs?\s+(?:cakes?|cookies?|cocktails?|shots?|drinks?|pops?)\b", r"bombe\s+(?:glac\w*|dessert|cake|de\s+(?:peinture|chantilly)|a[ée]rosol|anti)",
    r"(?:is|'s|are|was)\s+(?:the|da)\s+bomb\b", r"photobomb\w*",
    r"bomb\s+(?:shelters?|calorimeters?|cyclones?|squads?|sniffing|threats?|disposal)",
    r"explosive(?:ly)?\s+(?:growth|flavou?rs?|performance|results|sales|popularity|diarrh\w*|"
    r"start|debut|chemistry)", r"explosi(?:ve|on)[\s-]proof",
    r"worms?\s+(?:farms?|bins?|compost\w*|castings|gears?|drives?|tea)", r"earthworms?",
    r"(?:ring|tape|round|heart|hook|pin|silk|meal|wax)worms?", r"worms?\s+in\s+(?:my\s+|a\s+|the\s+)?"
    r"(?:dogs?|cats?|puppy|kittens?|horses?|chickens?|garden|compost|soil|lawn|kids?|child)",
    r"trojan\s+horse\s+(?:costume|statue|myth|story|tale)", r"trojans?\s+(?:football|team|usc)",
    r"molotov[\s-]ribbentrop", r"thermite\s+weld\w*", r"napalm\s+death",
    r"bombas?\s+(?:de|d'|di|da)\s+(?:agua|água|acqua|calor|calore|gasolina|benzina|combustible|"
    r"combust[íi]vel|v[áa]cuo|vac[íi]o|aire|ar|infusi[óo]n|insulina|piscina|po[çc]o|pozo|"
    r"semillas?|ba[ñn]o|humo|chocolate|crema|creme|bain|graines)",
    r"bomb[ea]s?\s+(?:alla|al|di|de|da|au|à)\s+(?:crema|creme|cr[èe]me|nutella|cioccolat\w*"
    r"|chocolat\w*|marmellata|ricotta|graines|bain)", r"bomboloni",
    r"(?:bombs?|tnt|explosives?)\s+in\s+(?:minecraft|roblox|fortnite|terraria)",
    r"(?:dynamite|bomb|explosive)\s+(?:pizza|dough|rolls?|sushi|shrimp|chicken|salad|sauce"
    r"|burgers?|dip|wings|punch|flavou?rs?)",
    r"(?:cardboard|wooden|paper|lego|toy|papier-m[aâ]ch[ée])\s+(?:\w+\s+)?(?:trojan|bomb|rocket)s?",
    r"trojan\s+horse\s+(?:out\s+of|from|of\s+troy|model|prop)",
    r"huile\s+de\s+ricin", r"(?:(?:lethal|deadly|fatal|killer)\s+)?(?:poison|toxin|toxic)\s+baits?",
    r"(?:rat|mouse|mice|rodent|slug|snail|ant|roach|cockroach|mole|gopher|weed)\s+poisons?", r"bomba\s+calabrese", "爆弾おにぎり",
    r"bade\w*bomben?", r"schoko\w*bomben?", r"samenbomben?", r"бомбочк",
)

# --------------------------------------------------------------------------- operations

MAKE = family(
    r"makes?\b", r"makers?\b", r"making", r"infect(?:ing)?\b", r"build", r"synthe[st]i[sz]", r"synthesis", r"synthetic\s+route",
    r"produc(?:e|ing|tion)\b", r"manufactur", r"prepar(?:e|ing|ation)\b", r"assembl(?:e|ing|y)\b",
    r"weaponi[sz]", r"cultur(?:e|ing)\b", r"cultivat", r"grow(?:ing)?\b", r"enhanc", r"aerosoli[sz]",
    r"dispers(?:e|al|ing)", r"deploy", r"releas(?:e|ing)\b", r"detonat", r"creat(?:e|ing)\b",
    r"write\b", r"writing", r"code\b", r"coding", r"develop", r"program\b", r"programming",
    r"generat(?:e|ing)\b", r"extract(?:ion|ing)?\b", r"purif", r"brew", r"cook", r"mix(?:ing)?\b",
    r"combin(?:e|ing)\b", r"enrich", r"obtain",
    # turning a source material into the agent ("turning castor beans into a toxin")
    r"turn(?:s|ed|ing)?\s+(?:[\w'-]+\s+){0,5}?into\b", r"convert", r"transform", r"trasform",
    r"verwandel", r"umwandel", r"umwandl", r"преврат", r"преобраз", "变成", "转化", "制成", "提炼",
    "تحويل",
    # bringing a material to weapons grade is the operation, whatever the verb
    r"(?:to|up\s+to)\s+(?:weapons?|bomb)[\s-](?:grade|usable)",
    r"(?:a|hasta|até)\s+(?:grado|grau)\s+(?:armament|militar|b[ée]lico|de\s+armas)",
    r"(?:à|a)\s+(?:la\s+)?qualit[ée]\s+militaire", r"auf\s+waffen(?:f[äa]hig|qualit|grad)",
    r"a\s+(?:livello|grado)\s+(?:militare|bellico)", r"до\s+оружейн", "到武器级", "至武器级",
    "兵器級まで", "兵器級に", r"إلى\s+درجة\s+(?:صنع\s+)?(?:الأسلحة|الاسلحة)", r"acquir(?:e|ing)", r"construct", r"rig\b", r"put\s+together",
    r"design\b", r"craft\b", r"undetectable", r"evad(?:e|es|ing)\b", r"bypass",
    r"fully\s+undetected", r"obfuscat", r"scripts?\b", r"made\b", r"si\s+fa\b", r"se\s+faz\b", r"on\s+fait\b",
    # es/pt/it/fr/de
    r"hac(?:er|e|en|erlo|erla)\b", r"fabric", r"sintetiz", r"s[ií]ntesis", r"s[íi]ntese",
    r"prepar[ae]r?\b", r"produc(?:ir|e)\b", r"constru", r"crear\b", r"escrib", r"program[ae]r?\b",
    r"cultiv", r"obten", r"mezcl", r"armar\b", r"enriquec", r"anreicher", r"arricch",
    r"reicher\w*\s+(?:\w+\s+){0,4}?an\b", r"faire\b", r"fabriqu", r"synth[ée]tis",
    r"pr[ée]par", r"produi", r"construi", r"cr[ée]er\b", r"[ée]cri(?:s|re|vez)\b", r"programm",
    r"her(?:zu)?stell", r"stell\w*\s+(?:\w+\s+){1,4}her\b", r"hergestellt", r"zu\s+(?:bauen|machen|erzeugen)", r"bau(?:en|t|e)?\b", r"zum\s+bau", r"mach(?:en|e|t)\b",
    r"synthetisier", r"erzeug", r"produzier", r"schreib", r"erstell", r"z[üu]chte", r"misch",
    r"fazer\b", r"fa[çc]o\b", r"produz", r"criar\b", r"crie\b", r"escrev", r"fare\b", r"fabbric",
    r"sintetizz", r"produrr", r"costrui", r"costruisc", r"creare\b", r"scriv", r"coltiv",
    # ru, zh, ja, ar
    r"сдела", r"изготов", r"синтез", r"приготов", r"произв", r"созда", r"собра", r"напи[сш]",
    r"выра[щс]", r"получ", r"смеша", r"обогат", r"обогащ", "浓缩", "濃縮", "تخصيب",
    "制造", "制作", "合成", "生产", "配制", "提取", "培养", "编写", "写一个", "写", "做", "造",
    "组装", "研制", "作る", "作り方", "作れ", "製造", "生成", "製作", "培養", "書いて", "書く",
    "組み立て", "作成", "صنع", "أصنع", "اصنع", "تصنيع", "تحضير", "تركيب", "إنتاج", "انتاج",
    "اكتب", "برمجة", "زراعة",
)

# What only a maker needs, named as a noun: asking for it is asking how the thing is made, with
# or without a verb ("materials list for ...", "... synthesis route", "code for a worm that ...").
MAKER_NOUNS = family(
    r"precursors?\b", r"reagents?\b", r"recipes?\b", r"ingredients?\b", r"materials?\b",
    r"components\b", r"supplies\b", r"parts\s+(?:list|needed|required|for|to)\b",
    r"list\s+of\s+parts", r"(?:bomb|device|detonator)\s+parts", r"shopping\s+list",
    r"equipment\s+(?:list|needed|required|for)\b", r"formulas?\b", r"formulations?\b",
    r"blueprints?", r"schematics?", r"(?:wiring|circuit|assembly|construction)\s+diagrams?",
    r"(?:build|construction|assembly)\s+plans\b", r"set[\s-]?up\s+(?:for|to|of)\b",
    r"designs?\s+(?:for|of)\s+an?\b", r"(?:growth|culture)\s+(?:media|medium)",
    # what a maker asks before starting: "what do I need for ...", in the ten languages
    r"what\s+(?:do|does|would|will|should)\s+(?:i|one|you|we)\s+need",
    r"what(?:'s|\s+is|\s+are)\s+(?:needed|required)", r"qu[ée]\s+necesito", r"que\s+faut-il",
    r"was\s+brauch(?:e|t)", r"o\s+que\s+(?:eu\s+)?preciso", r"cosa\s+(?:mi\s+)?serve",
    r"что\s+(?:мне\s+)?нужно", "需要什么", "何が必要", "ماذا أحتاج",
    r"(?:synthesis|synthetic|production|manufacturing|preparation|extraction|purification"
    r"|enrichment|assembly|weaponi[sz]ation|culturing|culture|growth|cooking)\s+"
    r"(?:routes?|pathways?|process(?:es)?|procedures?|protocols?|methods?|steps|instructions)\b",
    r"synthes[ei]s\b", r"(?:source\s+)?code\b", r"source\s+(?:for|to)\b", r"scripts?\b", r"payloads?\b", r"binar(?:y|ies)\b",
    r"executables?\b", r"(?:clients?|builders?|droppers?|loaders?|implants?|stubs?)\b",
    # es, pt, it, fr, de
    r"reactivos", r"precursores", r"receta", r"ingredientes", r"materiales", r"componentes",
    r"f[óo]rmula", r"planos\b", r"proceso\s+de\s+(?:producci[óo]n|fabricaci[óo]n|s[íi]ntesis)",
    r"ruta\s+de\s+s[íi]ntesis", r"c[óo]digo", r"reagentes", r"receita", r"materiais",
    r"processo\s+de\s+(?:produ[çc][ãa]o|fabrica[çc][ãa]o|s[íi]ntese)", r"rota\s+de\s+s[íi]ntese",
    r"reagenti", r"precursori", r"ricetta", r"ingredienti", r"materiali", r"componenti",
    r"processo\s+di\s+(?:produzione|fabbricazione|sintesi)", r"via\s+di\s+sintesi", r"codice",
    r"r[ée]actifs", r"pr[ée]curseurs", r"recette", r"ingr[ée]dients", r"mat[ée]riaux",
    r"composants", r"formule", r"proc[ée]d[ée]\s+de\s+(?:fabrication|production|synth[èe]se)",
    r"voie\s+de\s+synth[èe]se", r"reagenzien", r"vorstufen", r"ausgangsstoffe", r"rezept",
    r"zutaten", r"materialien", r"materialliste", r"bauteile", r"komponenten", r"baupl[äa]n",
    r"schaltplan", r"\w*anleitung", r"herstellungs\w*", r"synthese\w*", r"quellcode",
    # ru, zh, ja, ar
    r"реагент", r"прекурсор", r"рецепт", r"ингредиент", r"материал", r"компонент", r"чертеж",
    r"чертёж", r"технологи\w+\s+(?:производства|изготовления|синтеза)",
    r"процесс\w*\s+(?:производства|изготовления|синтеза)", r"исходн\w+\s+код", r"код\b",
    "原料", "试剂", "前体", "配方", "材料", "成分", "图纸", "蓝图", "工艺", "合成路线", "代码",
    "試薬", "前駆体", "レシピ", "設計図", "製造工程", "製造方法", "合成経路", "コード",
    "كاشف", "كواشف", "سلائف", "وصفة", "مكونات", "مواد", "مخطط", "عملية الإنتاج", "عملية التصنيع",
    "كود", "شيفرة",
)

# Operational detail no frame excuses: amounts, conditions, the full list or the full code.
DETAIL = family(
    r"quantit", r"amounts?\b", r"proportions?\b", r"ratios?\b", r"grams?\b", r"measurements",
    r"exact\b", r"precise\b", r"step[\s-]by[\s-]step", r"materials?\s+list",
    r"list\s+of\s+(?:materials|parts|ingredients|chemicals|supplies)", r"parts\s+list",
    r"shopping\s+list", r"conditions\b", r"temperatures?\b", r"yield\b",
    r"(?:full|complete|working|entire)\s+(?:\w+\s+)?(?:code|source|script|program)",
    r"source\s+code", r"equipment\b",
    r"cantidades", r"proporciones", r"paso\s+a\s+paso", r"lista\s+de\s+materia", r"exact[oa]s?\b",
    r"gramos", r"condiciones", r"quantit[ée]s", r"[ée]tape\s+par",
    r"liste\s+(?:du|de|des)\s+mat[ée]ri", r"grammes",
    r"mengen", r"schritt[\s-]f[üu]r[\s-]schritt", r"materialliste", r"genaue", r"gramm\b",
    r"bedingungen", r"chemikalien", r"quantidades",
    r"passo\s+a\s+passo", r"lista\s+de\s+materiais", r"exat[oa]s?\b", r"gramas",
    r"quantit[àa]", r"passo\s+(?:dopo|per)\s+passo", r"elenco", r"esatt[eoi]", r"grammi", r"количеств", r"пропорц", r"пошагов", r"шаг\s+за\s+шагом",
    r"точн\w+", r"грамм", r"список", r"услови",
    "详细", "一步一步", "步骤", "用量", "比例", "材料清单", "剂量", "具体",
    "詳しく", "詳細", "手順", "分量", "具体的",
    "خطوات", "بالتفصيل", "كميات", "الكميات", "المقادير", "قائمة المواد",
)

# An ask for a method: steps, a recipe, a guide, "how to" in any language.
METHOD = family(
    r"how\b", r"steps?\b", r"instructions?\b", r"procedures?\b", r"protocol", r"recipes?\b",
    r"guide\b", r"tutorial", r"walkthrough", r"walk\s+me", r"blueprints?", r"schematics?",
    r"formula", r"ingredients", r"chemicals\b", r"materials\b", r"method", r"ways?\s+to",
    r"what\s+do\s+i\s+need", r"(?:do|does|would|will)\s+(?:i|one|you|we)\s+need",
    r"(?:needed|required)\s+(?:to|for)\b", r"c[oó]mo\b", r"pasos", r"instrucciones", r"procedimiento",
    r"receta", r"gu[ií]a", r"ingredientes", r"materiales", r"qu[ií]micos", r"m[ée]todo",
    r"comment\b", r"[ée]tapes", r"instructions", r"proc[ée]d", r"recette", r"tutoriel",
    r"ingr[ée]dients", r"mat[ée]riel", r"produits\s+chimiques", r"m[ée]thode", r"quels?\b",
    r"quelles?\b", r"faut-il", r"wie\b", r"schritte", r"anleitung", r"verfahren", r"rezept",
    r"zutaten", r"materialien", r"welche", r"como\b", r"passos", r"instru[çc][õo]es", r"receita",
    r"materiais", r"quais\b", r"come\b", r"passaggi", r"istruzioni", r"procedura", r"ricetta",
    r"guida", r"ingredienti", r"materiali", r"metodo", r"quali\b", r"spiega", r"как\b",
    r"инструкц", r"шаги", r"рецепт", r"ингредиент", r"материал", r"метод", r"способ", r"какие",
    "方法", "配方", "说明", "教程", "代码", "怎么", "如何", "怎样", "哪些", "作り方", "やり方",
    "レシピ", "どうやって", "教えて", "コード", "كيف", "طريقة", "وصفة", "مكونات", "مواد", "كود",
    "ما هي",
)

# Imperatives and wants that ask for the thing itself: a method unless what is asked for is a
# piece of writing ("write an essay about ...").
ASKS = family(
    r"(?:^|[.!?:;]\s*)(?:please\s+)?(?:write|create|code|make|build|develop|generate|give|tell"
    r"|show|teach|explain|describe|list|outline|detail|provide|help)\b",
    r"\b(?:i|we)\s+(?:want|need|would\s+like|plan|intend)", r"give\s+me", r"tell\s+me",
    r"teach\s+me", r"show\s+me", r"help\s+me", r"escribe", r"dame", r"dime", r"expl[ií]ca",
    r"necesito", r"quiero", r"donne", r"dis-moi", r"explique", r"[ée]cris\b", r"je\s+veux",
    r"gib\b", r"erkl[äa]r", r"schreib", r"ich\s+(?:will|brauche|m[öo]chte)", r"escreva",
    r"me\s+d[êe]", r"quero", r"preciso", r"dammi", r"scrivi", r"voglio", r"дай", r"напиши",
    r"объясни", r"расскажи", r"нужн", r"告诉我", "给我", "请", "教我", "書いて", "ください",
    "اشرح", "أعطني", "اعطني", "أريد", "اكتب",
)

# --------------------------------------------------------------------------- lethal doses

# An amount asked for as the amount that kills ("how much X would kill", "a lethal dose"): a
# safety question about caffeine or paracetamol until a victim or a covert way of giving it joins.
KILLING_DOSE = family(
    r"how\s+(?:much|many)\b[^.?!;]{0,60}?\b(?:kill|killed|die|dies|be\s+(?:fatal|lethal|deadly))\b",
    r"(?:lethal|fatal|deadly|killing|toxic)\s+(?:dose|amount|quantity)",
    r"(?:what|which)\s+(?:dose|amount|quantity)\b[^.?!;]{0,40}?\b(?:kill|fatal|lethal|deadly)",
    r"enough\s+(?:[\w'-]+\s+){1,3}?to\s+kill\b",
    r"cu[áa]nt[oa]s?\b[^.?!;]{0,60}?\b(?:matar\w*|mata|muer\w*)\b", r"dosis\s+(?:letal|mortal)",
    r"(?:quelle|combien)\b[^.?!;]{0,60}?\b(?:tuer\w*|tue|mortelle)\b",
    r"dose\s+(?:l[ée]tale|mortelle|letal|mortal|letale|mortale)",
    r"wie\s*viel\w*\b[^.?!;]{0,60}?\b(?:t[öo]te\w*|t[öo]tet|t[öo]dlich\w*|stirbt)",
    r"t[öo]dlich\w*\s+(?:dosis|menge)",
    r"quant[oa]s?\b[^.?!;]{0,60}?\b(?:mata\w*|matar|morre\w*|uccid\w*|ucciderebbe|muore)\b",
    r"сколько\b[^.?!;]{0,60}?(?:убь[её]т|убить|умр|смертельн)", r"смертельн\w*\s+доз",
    r"多少[^。？！?!]{0,20}?(?:毒死|致死|杀死|死)", "致死剂量", "致死量", "致命剂量",
    r"何(?:グラム|ミリ|錠|mg)[^。？！?!]{0,20}?死", "どのくらい[^。？！?!]{0,20}?死",
    r"كم\s+(?:\S+\s+){0,4}?(?:يقتل|لقتل|يموت)", r"جرعة\s+(?:قاتلة|مميتة)",
)
# Giving it unseen: the covert way turns a dose into a plan to poison someone.
COVERT = family(
    r"unnoticed", r"undetected", r"undetectabl", r"untraceabl", r"secretly", r"covertly",
    r"without\s+(?:him|her|them|anyone|anybody|the\s+\w+|my\s+\w+|his\s+\w+|her\s+\w+)\s+"
    r"(?:noticing|knowing|tasting|smelling|suspecting|realizing|realising|finding\s+out)",
    r"(?:nobody|no\s+one|no-one|none)\s+(?:\w+\s+)?(?:notices|knows|suspects|finds\s+out|will\s+know)",
    r"(?:can't|cannot|won't|wouldn't|doesn't)\s+(?:\w+\s+)?(?:taste|smell|notice)",
    r"slip\s+(?:[\w'-]+\s+){0,2}?in(?:to)?\b", r"spike\s+(?:his|her|their|someone's|a)\b",
    r"sin\s+que\s+(?:\w+\s+){0,2}?(?:note|nadie|sepa|se\s+d[ée]\s+cuenta|sospeche)",
    r"a\s+escondidas", r"en\s+secreto", r"[àa]\s+son\s+insu", r"en\s+secret",
    r"sans\s+qu['e]\s*(?:\w+\s+){0,3}?(?:aper[çc]oive|remarque|sache|rende\s+compte)",
    r"unbemerkt", r"heimlich", r"ohne\s+dass\s+(?:\w+\s+){0,3}?(?:merkt|bemerkt)",
    r"sem\s+(?:que\s+)?(?:ele|ela|eles|elas|ningu[ée]m)\s+(?:\w+\s+)?(?:perceb|not|saib|desconfi)",
    r"em\s+segredo", r"senza\s+che\s+(?:\w+\s+){0,3}?(?:accorg|sappia|nessuno)",
    r"di\s+nascosto", r"незаметно", r"тайно", r"подсып", r"подмеш",
    "神不知鬼不觉", "不被发现", "不被察觉", "偷偷", "悄悄", "下毒", "気づかれずに", "気付かれずに",
    "こっそり", "バレずに", "ばれずに", "دون أن يلاحظ", "بدون أن يلاحظ", "دون علم", "خلسة", "سرا",
)
# Given to a person: "to give someone", "put in someone's drink", "dársela", "verabreichen".
GIVEN_TO = family(
    r"(?:give|feed|administer|serve|put|add|mix|slip)\s+(?:(?:it|this|that|them)\s+)?(?:to\s+)?"
    r"(?:someone|somebody|him|her|a\s+person|an?\s+(?:adult|man|woman|victim)|my\s+\w+)\b",
    r"in(?:to)?\s+(?:someone's|somebody's|his|her|their|my\s+\w+'s)\s+(?:drink|food|coffee|tea"
    r"|meal|water|wine|beer|glass|cup|soup)",
    r"d[áa]rs[ae]l[oa]s?\b", r"darle\b", r"en\s+su\s+(?:comida|bebida|caf[ée])",
    r"(?:la|le)\s+lui\s+donner", r"lui\s+donner", r"dans\s+son\s+(?:verre|caf[ée]|repas|th[ée])",
    r"verabreich", r"in\s+(?:sein|ihr)(?:en|em)?\s+(?:getr[äa]nk|essen|kaffee|tee)",
    r"na\s+comida\s+(?:dele|dela)", r"na\s+bebida\s+(?:dele|dela)",
    r"darg?li\w*\b", r"nel\s+suo\s+(?:cibo|caff[èe]|bicchiere|t[èe])",
    r"дать\s+(?:ему|ей)", "给他", "给她", "飲ませ", "食べさせ", "في طعامه", "في شرابه", "أعطيه",
)
# A victim named as a particular person ("kill my husband", "kill him").
MARKED_VICTIM = family(
    r"kill\s+(?:someone|somebody|him|her|my\s+\w+|his\s+\w+|our\s+\w+)",
)
# Any person as what the dose kills: with a mass-harm agent named, the dose is a weapon's.
A_PERSON = family(
    r"(?:kill|killed|die|dies)\s+(?:a|an|one)\s+(?:\d+\s*kg\s+|grown\s+)?(?:person|adult|human"
    r"|man|woman|people)", r"(?:kill|killed)\s+(?:a\s+)?(?:person|adults?|humans?|people)\b",
    r"adulto", r"adulte", r"erwachsen", r"pessoa", r"взрослого", r"человека", "成年人", "大人",
    "بالغ", "شخص",
)

# --------------------------------------------------------------------------- frames

# History, law, defence, detection, treatment and recovery: the request is *about* the subject.
ABOUT = family(
    r"histor", r"treat(?:y|ies)\b", r"conventions?\b", r"regulat", r"laws?\b", r"legal",
    r"ban(?:s|ned)?\b", r"prohibit", r"export\s+controls?", r"non-?proliferation",
    r"arms\s+control", r"sanctions", r"verif(?:y|ied|ication)", r"inspect", r"detect",
    r"protect", r"defen[cs]", r"defend(?!er)", r"prevent", r"mitigat", r"respond", r"response",
    r"incident", r"remov", r"clean", r"decontaminat", r"neutrali[sz]", r"dispos(?:e|al)\s+of\s+"
    r"(?:chemical|weapon|stockpile|munition)", r"destr(?:oy|uction)", r"treat(?:ment|ing|ed)?\b",
    r"symptoms?", r"antidotes?", r"vaccin", r"cur(?:e|ing)\b", r"recover", r"surviv", r"first\s+aid",
    r"signs\s+of", r"indicators", r"patch", r"yara", r"sigma\s+rule", r"antivirus", r"anti-virus",
    r"honeypot", r"screen(?:ing)?\b", r"simulat", r"(?:scale\s+)?models?\s+of\b", r"replica",
    r"museum", r"exhibit", "关于", "について", "بحث عن", r"analy[sz]", r"polic(?:y|ies)", r"ethic", r"trends?\b",
    r"career", r"courses?\b", r"lectures?\b", r"overview", r"summar",
    r"backups?\b", r"minecraft", r"roblox", r"fortnite", r"video\s+games?\b",
    r"absorb", r"withstand", r"r[ée]sist", r"blast[\s-]?(?:proof|resistant)", r"widerst",
    r"halten\s+(?:\w+\s+){0,3}?stand\b", r"выдерж", "抵御", "耐え", "مقاومة",
    r"sobre\s+(?!c[oó]mo\b)", r"[üu]ber\s+(?!wie\b)", r"[àa]\s+propos\s+d", r"au\s+sujet\s+d",
    r"riguardo", r"(?:о|об|про)\s+(?!том\b|как\b)",
    r"about\s+(?!how\b|making\b|building\b|producing\b|creating\b|writing\b|the\s+(?:steps"
    r"|process|recipe|synthesis|way|method|procedure))", r"scanners?", r"checkers?", r"blockers?", r"filters?\b",
    r"never\b", r"avoid", r"accidental", r"aftermath", r"victims", r"why\b",
    r"historia", r"hist[oó]ric", r"tratado", r"convenci[oó]n", r"ley\b", r"prohibi", r"proteg",
    r"protecci[oó]n", r"defens", r"preven", r"tratamiento", r"s[ií]ntomas", r"ant[ií]doto",
    r"vacuna", r"recuper", r"eliminar", r"histoire", r"historique", r"trait[ée]\b", r"loi\b",
    r"interdi", r"d[ée]tect", r"prot[ée]g", r"d[ée]fen(?!der)", r"pr[ée]ven", r"traitement", r"sympt[oô]mes",
    r"r[ée]cup[ée]r", r"supprimer", r"geschichte", r"historisch", r"vertrag", r"abkommen",
    r"[üu]bereinkommen", r"konvention", r"gesetz", r"verbot", r"erkenn", r"sch[üu]tz",
    r"\w*schutz", r"abwehr", r"verhinder", r"behandl", r"symptome", r"gegenmittel", r"impf",
    r"wiederherstell", r"entfern", r"\w*[üu]bereinkommen", r"hist[oó]ria", r"conven[çc][ãa]o",
    r"lei\b", r"proibi", r"detect", r"prote[çc][ãa]o", r"defes", r"tratamento", r"sintomas",
    r"vacina", r"remover", r"storia", r"storic", r"trattato", r"convenzione", r"legge", r"vieta",
    r"rilev", r"protegg", r"protezione", r"difes", r"trattamento", r"cura\b", r"curare",
    r"si\s+cura", r"sintomi", r"antidoto", r"rimuov", r"истори", r"договор", r"конвенц",
    r"закон", r"запрет", r"обнаруж", r"защит", r"предотвра", r"лечени", r"лечит", r"симптом",
    r"антидот", r"вакцин", r"восстанов", r"удал", "历史", "事件", "公约", "条约", "法律",
    "禁止", "检测", "防范", "防护", "保护", "预防", "治疗", "症状", "解毒", "疫苗", "恢复",
    "清除", "歴史", "条約", "検出", "検知", "防御", "防護", "予防", "治療", "解毒", "ワクチン",
    "復旧", "駆除", "تاريخ", "معاهدة", "اتفاقية", "قانون", "حظر", "كشف", "حماية", "الوقاية",
    "علاج", "أعراض", "ترياق", "لقاح", "استعادة", "إزالة",
)

# A piece of writing asked for ("write an essay about ..."): it makes "write" an author's verb, not
# a coder's, but a maker's noun inside it ("a poem that lists the precursors") is still asked for.
DOCUMENTS = family(
    r"essays?\b", r"poems?\b", r"reports?\b", r"documentar", r"podcast", r"presentation",
    r"articles?\b", r"art[íi]culo", r"ensayo", r"essai", r"artigo", r"articolo", r"saggio",
    r"aufsatz", r"artikel", r"стать[яюи]", r"доклад", r"реферат", "文章", "论文", "記事", "論文",
    "レポート", "مقال",
)

# Hiding code from defenders is operational whatever the frame ("make it undetectable by AV"),
# and so is naming the defender it gets past ("hides from Windows Defender", "slips by Norton").
_DEFENDERS = (
    r"(?:(?:windows|microsoft|ms)\s+)?defender\b|crowd\s?strike|falcon\b|sentinel\s?one"
    r"|carbon\s+black|sophos|kaspersky|norton|mcafee|eset\b|bit\s?defender|avast|avg\b"
    r"|malwarebytes|trend\s?micro|symantec|cylance|cortex\s+xdr|virus\s?total|amsi\b"
    r"|smart\s?screen|edr\b|xdr\b|anti-?virus\w*|anti-?malware|av\b|virenscanner|virenschutz"
    r"|антивирус\w*|security\s+(?:software|tools?|products?)|endpoint\s+protection"
)
_GETS_PAST = (
    r"hid(?:e|es|ing)\s+(?:itself\s+)?from|evad(?:e|es|ing)|avoid(?:s|ing)?|bypass(?:es|ing)?"
    r"|gets?\s+(?:past|around|by)|slip(?:s|ping)?\s+(?:past|by|through)|sneaks?\s+(?:past|by)"
    r"|invisible\s+to|undetected\s+by|unseen\s+by|stays?\s+hidden\s+from|fool(?:s|ing)?"
    r"|without\s+(?:triggering|alerting|tripping|being\s+(?:detected|flagged|caught)\s+by)"
    # es, pt, it, fr, de, ru
    r"|evad\w*|elud\w*|esquiv\w*|burl\w*|contorn\w*|escap\w*|sfugg\w*|aggir\w*|[ée]chapp\w*"
    r"|[ée]vit\w*|umgeh\w*|entgeh\w*|austrickst|обход\w*|обойт\w*|скрыва\w*"
)
# Switching a defender off is evasion once malware is named, but alone it is an admin's chore
# ("how to disable Windows Defender notifications").
_SWITCHES_OFF = (
    r"disabl(?:e|es|ing)|turns?\s+off|switch(?:es)?\s+off|kills?|blinds?|tamper(?:s|ing)?\s+with"
    r"|desactiv\w*|desativ\w*|disattiv\w*|d[ée]sactiv\w*|deaktivier\w*|отключ\w*"
)
# Code that gets past a named defender is malware, whatever it is called ("code that slips by
# Kaspersky"): evasion names the subject as well as asking for operational detail.
PASSES_DEFENDER = family(
    rf"(?:{_GETS_PAST})\s+(?:(?!with\b|using\b|via\b|and\b|or\b)[\w'-]+\s+){{0,3}}?"
    rf"(?:l'|d'|all'|dell'|al\s+|à\s+l'|a\s+l'|die\s+|den\s+)?(?:{_DEFENDERS})",
    rf"(?:{_DEFENDERS})\s+(?:\w+\s+){{0,2}}?(?:umgeh|umgeht|entgeht|austrickst)",
    rf"(?:{_DEFENDERS})\s+(?:will\s+not|won't|wouldn't|would\s+not|can't|cannot|can\s+not"
    r"|doesn't|does\s+not|never|fails?\s+to)\s+(?:\w+\s+)?(?:flag|detect|catch|see|notice|find"
    r"|block|stop)",
    "免杀", "绕过", "躲避", "规避", "検出されない", "すり抜け", "تجاوز", "تفادي",
)
EVADE = family(
    r"undetect(?:able|ed)", r"evad(?:e|es|ing)\b", r"evasion", r"bypass", r"fud\b", r"obfuscat",
    r"indetectable", r"unerkannt", r"незаметн", "回避",
    rf"(?:{_SWITCHES_OFF})\s+(?:[\w'-]+\s+){{0,3}}?(?:l'|d'|all'|dell'|die\s+|den\s+)?"
    rf"(?:{_DEFENDERS})",
    rf"(?:{_DEFENDERS})\s+(?:\w+\s+){{0,2}}?(?:deaktiviert|ausschaltet|abschaltet)",
)

# Someone else's deed, past or hypothetical ("how did the cult make", "how could Iran build",
# "what did the bomb use"), or a yes/no question about it ("does ransomware evade Defender?").
THIRD_PARTY = re.compile(
    r"\bhow\s+(?:did|was|were|had)\b|\b(?:was|were|had\s+been)\s+used\b"
    r"|\bdid\s+(?:the\s+)?[\w-]+(?:\s+[\w-]+){0,3}?\s+use\b"
    r"|^(?:does|do|did|can|could|is|are|were|will|would)\s+(?!i\b|we\b|you\b|u\b|one\b"
    r"|someone|somebody|anyone|people\b|a\s+person\b|there\b|it\b)"
    r"|\bhow\s+(?:do|does|could|would|can|might|will)\s+(?!i\b|we\b|you\b|u\b|one\b"
    r"|someone|somebody|anyone|people\b|a\s+person\b)"
    r"|\bhow\s+(?!i\b|we\b|you\b|u\b|one\b|to\b|someone|somebody|anyone|people\b)(?:the\s+)?"
    r"[\w-]+\s+(?:could|would|might|did|managed\s+to|was\s+able\s+to)\b"
)

# Words a follow-up points back with: "how do I make *it*", "¿cómo *lo* hago?".
POINTS_BACK = family(
    r"it\b", r"its\b", r"this\b", r"that\b", r"these\b", r"those\b", r"them\b", r"one\b",
    r"the\s+(?:same|agent|gas|stuff|weapon|device|toxin|compound|chemical|substance|program"
    r"|code|virus|malware|thing|bomb)\b", r"lo\b", r"la\b", r"le\b", r"les\b", r"eso\b", r"esto\b",
    r"cela\b", r"ça\b", r"es\b", r"das\b", r"dies", r"isso\b", r"isto\b", r"ciò\b", r"questo\b",
    r"его\b", r"её\b", r"это", r"такой", "它", "这个", "那个", "それ", "これ", "ذلك", "هذا",
)

# Scripts the rules read; a request mostly in another is judged by the model gate, if any.
READABLE_SCRIPTS = re.compile(
    r"[a-z\u00c0-\u024f\u0400-\u04ff\u4e00-\u9fff\u3040-\u30ff\u0600-\u06ff]"
)
# fmt: on
