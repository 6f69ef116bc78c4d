"""placeholder"""

NEWEST_VERSION = None


def looks_like_axolotl(data: dict) -> bool:
    return False
