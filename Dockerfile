FROM python:3.12-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
COPY infx_site ./infx_site
COPY runs ./runs
COPY curves ./curves
RUN pip install --no-cache-dir -e .
COPY . .
RUN DATABASE_URL=sqlite:////tmp/build.sqlite3 python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "infx_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
