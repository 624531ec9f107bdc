"""Choice lists for the certificates app."""

from django.db import models


class KeyType(models.TextChoices):
    """Keys the appliance generates; uploads may also carry RSA of other sizes and ECDSA P-521."""

    RSA_2048 = "rsa-2048", "RSA 2048 bits"
    RSA_4096 = "rsa-4096", "RSA 4096 bits"
    ECDSA_P256 = "ecdsa-p256", "ECDSA P-256"
    ECDSA_P384 = "ecdsa-p384", "ECDSA P-384"
