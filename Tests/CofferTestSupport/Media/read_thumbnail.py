"""Reads thumbnails as another tool would (Pillow): for each PNG named, its size, its text
chunks and the MD5 of its Thumb::URI (what the standard names the file by), one JSON object
per line: {"width", "height", "format", "text": {...}, "uriMD5"}."""
import hashlib
import json
import sys

from PIL import Image

for name in sys.argv[1:]:
    with Image.open(name) as image:
        image.load()
        text = {key: value for key, value in image.info.items() if isinstance(value, str)}
        digest = hashlib.md5(text.get("Thumb::URI", "").encode("utf-8")).hexdigest()
        print(json.dumps({"width": image.width, "height": image.height, "format": image.format, "text": text,
                          "uriMD5": digest}))
