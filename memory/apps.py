from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Importing the ops package registers every op handler with the registry.
        from memory import ops  # noqa: F401
        from memory.services.recall_engines import registry

        # The configured recall engine must be registered and runnable here (else start-up
        # fails: ImproperlyConfigured); its derived-copy hooks are registered.
        registry.install()
