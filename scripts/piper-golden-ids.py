"""
Golden phoneme ids of the reference Piper (PyPI piper-tts) for joe (en_US-joe-medium): written once, by hand, into
test/fixtures/piper-golden-ids.json; test/operations/synthesize/piper-golden.test.ts compares ours with them.

    python3 -m venv ~/venvs/piper-tts && ~/venvs/piper-tts/bin/pip install piper-tts==1.8.0
    ~/venvs/piper-tts/bin/python scripts/piper-golden-ids.py <dir holding en_US-joe-medium.onnx.json> > test/fixtures/piper-golden-ids.json

Only the voice's config is read (phoneme_id_map): no model run. For each text: the reference's phonemes per sentence
(PiperVoice.phonemize, espeak-ng as piper-tts bundles it) and their ids (PiperVoice.phonemes_to_ids).
"""
import json
import sys
from importlib.metadata import version
from pathlib import Path

from piper.config import PiperConfig
from piper.voice import PiperVoice

TEXTS = [
    "The weather is lovely today, so we will walk to the market.",
    "Do you want to come along?",
    "It opens early: at eight.",
    "Please remember to bring your umbrella, because it may rain this afternoon.",
    "She finished the report before lunch and sent it to the whole team.",
    "Wow! That was fast.",
    "We bought apples; pears, too.",
    "The library opens early in the morning and closes late on Fridays.",
    "My brother is studying history at a university in the north, and he loves it.",
    "Could you speak a little more slowly?",
    "Books borrowed from the library must be returned within three weeks.",
    "Good luck with the interview tomorrow. Call me when it is over!",
]

config_path = Path(sys.argv[1]) / "en_US-joe-medium.onnx.json"
config_dict = json.loads(config_path.read_text(encoding="utf-8"))
# phonemize() and phonemes_to_ids() read only the config; no ONNX session is needed for them.
voice = PiperVoice(session=None, config=PiperConfig.from_dict(config_dict))
lines = []
for text in TEXTS:
    phonemes = voice.phonemize(text)
    # Each phoneme is one code point: a sentence's phonemes are kept as one string.
    assert all(len(p) == 1 for sentence in phonemes for p in sentence)
    sentence = {"text": text, "phonemes": ["".join(p) for p in phonemes], "ids": [voice.phonemes_to_ids(p) for p in phonemes]}
    lines.append(json.dumps(sentence, ensure_ascii=False))
header = {"made_by": "scripts/piper-golden-ids.py", "reference": f"piper-tts {version('piper-tts')}", "voice": "en_US-joe-medium"}
# One sentence per line.
sys.stdout.write(json.dumps(header, ensure_ascii=False)[:-1] + ', "sentences": [\n' + ",\n".join(lines) + "\n]}\n")
