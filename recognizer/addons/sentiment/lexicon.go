package sentiment

// The lexicons below were hand-written for earshot (not copied from any
// published lexicon). Valences run from -4 (extremely negative) to +4
// (extremely positive), on the scale VADER popularised; emotions are
// joy, anger, sadness, fear, surprise and disgust. Words are lower case as
// recognisers write them; inflected forms are listed separately.

var valence = map[string]float64{
	// positive
	"good": 1.9, "great": 3.1, "excellent": 3.2, "amazing": 3.1, "awesome": 3.1,
	"wonderful": 3.2, "fantastic": 3.3, "brilliant": 3.0, "perfect": 3.0, "superb": 3.1,
	"outstanding": 3.0, "terrific": 3.0, "marvelous": 3.0, "marvellous": 3.0, "splendid": 2.8,
	"nice": 1.8, "fine": 0.8, "okay": 0.5, "ok": 0.5, "alright": 0.5, "decent": 1.2,
	"happy": 2.7, "glad": 2.0, "pleased": 2.0, "delighted": 3.0, "thrilled": 3.0,
	"excited": 2.2, "cheerful": 2.4, "joy": 2.8, "joyful": 2.9, "love": 3.2, "loved": 2.9,
	"loves": 2.7, "lovely": 2.8, "like": 1.5, "liked": 1.6, "likes": 1.5, "enjoy": 2.2,
	"enjoyed": 2.3, "enjoying": 2.2, "fun": 2.3, "beautiful": 2.9, "pretty": 1.8,
	"thank": 1.5, "thanks": 1.8, "thankful": 2.2, "grateful": 2.4, "appreciate": 2.0,
	"appreciated": 2.1, "helpful": 1.9, "kind": 1.9, "friendly": 2.0, "polite": 1.4,
	"easy": 1.4, "simple": 0.8, "quick": 1.0, "fast": 0.9, "smooth": 1.2, "clean": 1.1,
	"comfortable": 1.6, "safe": 1.4, "secure": 1.3, "calm": 1.3, "relaxed": 1.8,
	"relieved": 1.9, "satisfied": 1.9, "success": 2.6, "successful": 2.6, "win": 2.6,
	"won": 2.4, "winning": 2.4, "best": 3.0, "better": 1.9, "improve": 1.9,
	"improved": 2.0, "improvement": 1.9, "recommend": 1.6, "recommended": 1.6,
	"impressive": 2.6, "impressed": 2.4, "proud": 2.1, "hope": 1.9, "hopes": 1.7,
	"hopeful": 1.9, "dream": 1.2, "dreams": 1.0, "wish": 1.0, "agree": 1.4,
	"correct": 1.2, "right": 0.5, "fair": 1.2, "honest": 1.9, "trust": 2.0,
	"reliable": 1.9, "worth": 1.2, "valuable": 2.1, "useful": 1.8, "favorite": 2.0,
	"favourite": 2.0, "yay": 2.4, "hooray": 2.6, "wow": 2.0, "cool": 1.3,
	"sweet": 1.9, "gorgeous": 3.0, "charming": 2.4, "delightful": 2.9, "pleasant": 2.3,
	"pleasure": 2.6, "welcome": 2.0, "welcomed": 1.9, "congratulations": 2.9, "bless": 1.9,
	"blessed": 2.2, "lucky": 2.0, "fortunate": 2.1, "free": 1.0, "generous": 2.3,
	"gentle": 1.6, "warm": 1.2, "brave": 2.0, "strong": 1.2, "smart": 1.7,
	"clever": 1.8, "wise": 1.8, "fortune": 1.5, "prosper": 2.2, "peace": 2.2,
	"peaceful": 2.2, "praise": 2.3, "admire": 2.3, "admired": 2.2, "respect": 2.0,
	"respectable": 1.8, "amiable": 2.0, "fresh": 1.3, "fine-looking": 2.0, "healthy": 1.7,
	"laugh": 2.2, "laughed": 2.0, "laughing": 2.2, "smile": 2.0, "smiled": 2.0,
	"excite": 2.0, "exciting": 2.3, "interesting": 1.7, "interested": 1.6, "solved": 1.8,
	"resolved": 1.8, "fixed": 1.5, "works": 0.6, "working": 0.4, "glorious": 3.0,
	"triumph": 2.8, "treasure": 2.2, "care": 1.3, "caring": 2.0, "support": 1.5,
	"supportive": 2.0, "encourage": 1.8, "encouraging": 2.1, "calmly": 1.0, "gladly": 1.8,
	"surprised": 0.6, "incredible": 2.7, "magnificent": 3.1, "fabulous": 3.1,
	"beauty": 2.6, "beautifully": 2.7, "true": 0.8, "positive": 2.0, "benefit": 1.6,
	"bonus": 1.8, "reward": 2.0, "gift": 1.8, "celebrate": 2.7, "celebration": 2.6,

	// negative
	"bad": -2.5, "terrible": -3.1, "horrible": -3.1, "awful": -3.1, "worst": -3.1,
	"worse": -2.1, "poor": -2.1, "poorly": -2.0, "sad": -2.1, "unhappy": -2.1,
	"upset": -2.0, "angry": -2.6, "mad": -2.1, "furious": -3.0, "annoyed": -1.9,
	"annoying": -2.0, "irritated": -1.9, "frustrated": -2.1, "frustrating": -2.1,
	"disappointed": -2.2, "disappointing": -2.2, "disappointment": -2.3, "hate": -3.0,
	"hated": -3.0, "hates": -2.9, "dislike": -1.8, "disliked": -1.8, "sorry": -0.8,
	"sorrow": -2.4, "grief": -2.6, "pain": -2.2, "painful": -2.4, "hurt": -2.2,
	"hurts": -2.1, "suffer": -2.4, "suffering": -2.5, "cry": -2.0, "cried": -2.0,
	"crying": -2.1, "tears": -1.8, "lonely": -2.0, "alone": -1.0, "miserable": -2.8,
	"depressed": -2.6, "depressing": -2.3, "tragic": -3.0, "tragedy": -3.0,
	"loss": -1.5, "lost": -1.3, "lose": -1.4, "losing": -1.3, "fail": -2.3,
	"failed": -2.3, "failure": -2.4, "fails": -2.2, "broken": -1.9, "break": -1.0,
	"broke": -1.6, "wrong": -2.1, "problem": -1.7, "problems": -1.7, "issue": -1.0,
	"issues": -1.1, "trouble": -1.8, "error": -1.6, "errors": -1.6, "bug": -1.2,
	"crash": -1.9, "crashed": -2.0, "slow": -1.2, "late": -1.0, "delay": -1.3,
	"delayed": -1.4, "waiting": -0.4, "wait": -0.3, "expensive": -1.3, "difficult": -1.5,
	"hard": -0.7, "confusing": -1.5, "confused": -1.3, "complicated": -1.2,
	"ugly": -2.4, "stupid": -2.4, "useless": -2.2, "worthless": -2.6, "rude": -2.2,
	"unfair": -2.1, "cheat": -2.4, "cheated": -2.5, "lie": -1.8, "lied": -2.0,
	"liar": -2.5, "scam": -2.7, "fraud": -2.8, "steal": -2.3, "stolen": -2.3,
	"afraid": -2.0, "scared": -2.1, "fear": -2.2, "feared": -2.0, "frightened": -2.3,
	"terrified": -2.9, "worried": -1.8, "worry": -1.7, "worrying": -1.8, "nervous": -1.4,
	"anxious": -1.8, "panic": -2.3, "danger": -2.2, "dangerous": -2.1, "risk": -1.1,
	"threat": -2.1, "threatened": -2.2, "kill": -3.1, "killed": -3.2, "die": -2.9,
	"died": -2.9, "dead": -3.0, "death": -2.9, "sick": -2.0, "ill": -1.8, "illness": -1.9,
	"disease": -2.0, "injury": -2.0, "injured": -2.1, "accident": -2.0, "disaster": -3.1,
	"damage": -2.0, "damaged": -2.0, "destroy": -2.5, "destroyed": -2.6, "angrily": -2.4,
	"rage": -2.8, "outraged": -2.9, "outrageous": -2.5, "disgusting": -2.9,
	"disgusted": -2.6, "gross": -2.1, "nasty": -2.6, "sucks": -2.4, "crap": -2.3,
	"damn": -1.6, "hell": -1.8, "boring": -1.8, "bored": -1.6, "tired": -1.3,
	"exhausted": -1.8, "stress": -1.9, "stressed": -2.0, "stressful": -2.0, "shame": -2.1,
	"ashamed": -2.1, "embarrassed": -1.7, "guilty": -1.8, "regret": -1.9, "complain": -1.7,
	"complaint": -1.8, "complaints": -1.8, "refund": -0.6, "cancel": -0.8, "cancelled": -1.0,
	"canceled": -1.0, "unfortunately": -1.7, "sadly": -1.9, "alas": -1.5,
	"dreadful": -2.8, "selfish": -2.0, "cruel": -2.8, "cold": -0.8, "harsh": -1.9,
	"hostile": -2.3, "violent": -2.7, "war": -2.9, "enemy": -2.4, "attack": -2.1,
	"sorrowful": -2.4, "gloomy": -2.0, "grim": -2.0, "bitter": -1.9, "vanished": -0.8,
	"tedious": -1.8, "negative": -1.9, "mess": -1.8, "messy": -1.5, "dirty": -1.8,
	"awkward": -1.2, "annoy": -1.9, "insult": -2.3, "insulted": -2.3, "abuse": -3.0,
	"blame": -1.6, "guilt": -1.9, "confusion": -1.4, "doubt": -1.2, "doubtful": -1.3,
	"uncertain": -1.0, "unclear": -0.9, "unable": -1.2, "impossible": -1.6, "missing": -1.2,
	"dispute": -1.6, "angered": -2.5, "anger": -2.7, "sadness": -2.4, "misery": -2.7,
	"despair": -2.8, "hopeless": -2.6, "horror": -2.9, "shock": -1.7, "shocked": -1.6,
	"shocking": -2.0, "unacceptable": -2.4, "ridiculous": -1.9, "pathetic": -2.4,
	"lousy": -2.3, "mediocre": -1.3, "inferior": -1.7, "weak": -1.3, "ruined": -2.5,
	"ruin": -2.4, "screwed": -2.1, "hurtful": -2.3, "fault": -1.6, "faulty": -1.8,
	"defective": -2.0, "complained": -1.7, "struggle": -1.5, "struggling": -1.6, "poverty": -2.2,
	"hungry": -1.0, "cost": -0.3,
}

// negators flip the valence of what follows them within negationWindow
// words ("not good", "never happy", "don't like").
var negators = map[string]bool{
	"not": true, "no": true, "never": true, "nor": true, "neither": true, "nothing": true,
	"nobody": true, "none": true, "nowhere": true, "without": true, "hardly": true,
	"barely": true, "scarcely": true, "cannot": true, "can't": true, "cant": true,
	"don't": true, "dont": true, "doesn't": true, "doesnt": true, "didn't": true,
	"didnt": true, "isn't": true, "isnt": true, "wasn't": true, "wasnt": true,
	"aren't": true, "arent": true, "weren't": true, "werent": true, "won't": true,
	"wont": true, "wouldn't": true, "wouldnt": true, "shouldn't": true, "shouldnt": true,
	"couldn't": true, "couldnt": true, "haven't": true, "havent": true, "hasn't": true,
	"hasnt": true, "hadn't": true, "hadnt": true, "ain't": true, "aint": true,
}

// boosters scale the next sentiment word up (positive) or down
// (negative, dampeners) by this much of its magnitude.
var boosters = map[string]float64{
	"very": 0.29, "really": 0.29, "extremely": 0.4, "so": 0.25, "too": 0.2,
	"totally": 0.3, "absolutely": 0.35, "completely": 0.3, "incredibly": 0.35,
	"super": 0.3, "truly": 0.29, "highly": 0.29, "deeply": 0.3, "utterly": 0.35,
	"most": 0.25, "especially": 0.25, "exceptionally": 0.35, "remarkably": 0.3,
	"particularly": 0.25, "quite": 0.15, "such": 0.2, "awfully": 0.3, "terribly": 0.3,
	"slightly": -0.29, "somewhat": -0.29, "barely": -0.4, "marginally": -0.29,
	"partly": -0.29, "fairly": -0.15, "rather": -0.1, "little": -0.2, "bit": -0.29,
	"kinda": -0.29, "sorta": -0.29, "almost": -0.2, "less": -0.3,
}

// degreeAdjectives are adjectives that, directly before a word with a
// valence, intensify it instead of carrying their own ("great sorrow",
// "deep regret", "terrible pain" stays terrible because it has valence of
// its own and the same sign).
var degreeAdjectives = map[string]float64{
	"great": 0.35, "deep": 0.3, "huge": 0.3, "big": 0.2, "real": 0.2, "total": 0.3,
	"complete": 0.3, "utter": 0.35, "enormous": 0.35, "profound": 0.35,
}

// contrast words shift weight to what follows them ("it was cheap but it
// broke"): words before are scaled by beforeContrast, after by
// afterContrast.
var contrast = map[string]bool{"but": true, "however": true, "although": true, "though": true, "yet": true}

// emotionWords maps words to an emotion.
var emotionWords = map[string]string{
	"happy": "joy", "glad": "joy", "pleased": "joy", "delighted": "joy", "thrilled": "joy",
	"excited": "joy", "cheerful": "joy", "joy": "joy", "joyful": "joy", "love": "joy",
	"loved": "joy", "lovely": "joy", "enjoy": "joy", "enjoyed": "joy", "fun": "joy",
	"wonderful": "joy", "fantastic": "joy", "great": "joy", "amazing": "joy", "awesome": "joy",
	"excellent": "joy", "perfect": "joy", "thanks": "joy", "thank": "joy", "grateful": "joy",
	"laugh": "joy", "laughed": "joy", "smile": "joy", "celebrate": "joy", "yay": "joy",
	"hooray": "joy", "proud": "joy", "relieved": "joy", "satisfied": "joy", "beautiful": "joy",
	"delightful": "joy", "pleasure": "joy", "congratulations": "joy", "hopes": "joy", "hope": "joy",
	"dreams": "joy",
	"angry":  "anger", "mad": "anger", "furious": "anger", "annoyed": "anger", "annoying": "anger",
	"irritated": "anger", "frustrated": "anger", "frustrating": "anger", "hate": "anger",
	"hated": "anger", "rage": "anger", "outraged": "anger", "outrageous": "anger", "unacceptable": "anger",
	"ridiculous": "anger", "rude": "anger", "unfair": "anger", "cheated": "anger", "scam": "anger",
	"liar": "anger", "insulted": "anger", "complain": "anger", "complaint": "anger", "anger": "anger",
	"angered": "anger", "hostile": "anger", "damn": "anger", "blame": "anger", "pathetic": "anger",
	"sad": "sadness", "unhappy": "sadness", "sorrow": "sadness", "grief": "sadness", "cry": "sadness",
	"cried": "sadness", "crying": "sadness", "tears": "sadness", "lonely": "sadness", "miserable": "sadness",
	"depressed": "sadness", "depressing": "sadness", "tragic": "sadness", "tragedy": "sadness",
	"loss": "sadness", "lost": "sadness", "disappointed": "sadness", "disappointing": "sadness",
	"disappointment": "sadness", "sorry": "sadness", "regret": "sadness", "died": "sadness",
	"death": "sadness", "despair": "sadness", "hopeless": "sadness", "sadness": "sadness",
	"misery": "sadness", "sadly": "sadness", "unfortunately": "sadness", "hurt": "sadness",
	"gloomy": "sadness", "sorrowful": "sadness",
	"afraid": "fear", "scared": "fear", "fear": "fear", "frightened": "fear", "terrified": "fear",
	"worried": "fear", "worry": "fear", "worrying": "fear", "nervous": "fear", "anxious": "fear",
	"panic": "fear", "danger": "fear", "dangerous": "fear", "threat": "fear", "threatened": "fear",
	"horror": "fear", "risk": "fear",
	"surprised": "surprise", "surprise": "surprise", "surprising": "surprise", "wow": "surprise",
	"shocked": "surprise", "shock": "surprise", "shocking": "surprise", "unexpected": "surprise",
	"incredible": "surprise", "unbelievable": "surprise", "astonished": "surprise", "amazed": "surprise",
	"disgusting": "disgust", "disgusted": "disgust", "gross": "disgust", "nasty": "disgust",
	"sick": "sadness", "awful": "disgust", "horrible": "disgust", "revolting": "disgust", "filthy": "disgust",
}
