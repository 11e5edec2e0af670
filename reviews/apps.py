from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"

    def ready(self) -> None:
        from reviews import ratelimit  # noqa: F401  (connects the login limiter's signals)
