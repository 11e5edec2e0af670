from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Importing the ops package registers every op handler with the registry.
        from memory import ops  # noqa: F401
        from memory.services import (
            hybrid_store,  # noqa: F401  (registers its derived-copy hooks)
            term_store,  # noqa: F401  (the same, for term rows)
        )
