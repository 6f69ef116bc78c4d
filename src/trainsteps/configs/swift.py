"""placeholder"""

NEWEST_VERSION = None


def looks_like_swift(data: dict) -> bool:
    return False
