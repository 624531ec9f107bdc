"""Field validators built from the compiler's rules, so the API accepts what it can render."""

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator

from compiler import rules

validate_name = RegexValidator(rules.NAME_RE, rules.NAME_HELP)
validate_http_path = RegexValidator(rules.HTTP_PATH_RE, rules.HTTP_PATH_HELP)
validate_host = RegexValidator(rules.HOST_RE, "Enter a DNS host name such as www.example.com.")
port_validators = [MinValueValidator(rules.PORT_MIN), MaxValueValidator(rules.PORT_MAX)]
weight_validators = [MinValueValidator(rules.WEIGHT_MIN), MaxValueValidator(rules.WEIGHT_MAX)]
status_validators = [MinValueValidator(rules.HTTP_STATUS_MIN), MaxValueValidator(rules.HTTP_STATUS_MAX)]
rise_fall_validators = [MinValueValidator(1), MaxValueValidator(rules.CHECK_RISE_FALL_MAX)]
interval_validators = [
    MinValueValidator(rules.CHECK_INTERVAL_MS_MIN),
    MaxValueValidator(rules.CHECK_INTERVAL_MS_MAX),
]
