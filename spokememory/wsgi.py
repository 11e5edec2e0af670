import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "spokememory.settings")
application = get_wsgi_application()

from spokememory.warm import warm  # noqa: E402 - after Django is set up

warm()
