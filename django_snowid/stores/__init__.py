"""The store layer every feature shares: families, the registry, the Redis adapter."""

from .base import Family, FamilyChecks, Needs, Store, StoreErrors
from .registry import get_store

__all__ = ["Family", "FamilyChecks", "Needs", "Store", "StoreErrors", "get_store"]
