from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        # Importing the ops package registers every op handler with the registry.
        from memory import ops, statements  # noqa: F401
        from memory.services.recall_engines import registry

        # The configured recall engine must be registered and runnable here (else start-up
        # fails: ImproperlyConfigured); its derived-copy hooks are registered.
        registry.install()
        # Every PostgreSQL session runs without JIT compilation (statements.session_settings).
        connection_created.connect(statements.session_settings, dispatch_uid="spoke-session")
