# varimp dashboard: gunicorn serving app:server as a non-root user.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    WEB_CONCURRENCY=2 \
    WEB_THREADS=4 \
    PORT=8050 \
    VARIMP_CACHE_DIR=/var/cache/varimp

RUN groupadd --system varimp && useradd --system --gid varimp --create-home varimp \
    && mkdir -p /var/cache/varimp && chown varimp:varimp /var/cache/varimp

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY app.py ./
COPY varimp_core ./varimp_core
COPY pages ./pages
COPY assets ./assets

USER varimp
EXPOSE 8050

HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/_health' % os.environ.get('PORT', '8050'), timeout=4).read()" || exit 1

# Workers from WEB_CONCURRENCY, each with WEB_THREADS threads (gthread: a slow client holds a
# thread, not a worker); long requests (uploads, sync callbacks) get 120 s, idle keep-alive 5 s.
CMD ["sh", "-c", "exec gunicorn app:server --bind 0.0.0.0:${PORT} --workers ${WEB_CONCURRENCY} --worker-class gthread --threads ${WEB_THREADS} --timeout 120 --graceful-timeout 30 --keep-alive 5"]
