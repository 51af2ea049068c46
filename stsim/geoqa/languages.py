"""Parallel languages of the geoqa questions (seed 003 §3.5).

The same question (same task id, binding and gold) in another language: the question sentence
is translated, placeholders are filled with localised entity labels, and -- as in the paper's
evaluation ("the instructions, answer format and tool catalog remain English", §5.3) -- the
answer instruction, the ``Answer:`` line and the maps of simulated cities stay English, and
gold answers stay the English names.

* **Template translations** (:data:`QUESTIONS`) are written by the stsim developers for the
  canonical wording (paraphrase 0) of a core set of templates; they were **not** produced by a
  translation service and are **not human-verified** by native speakers (the paper's
  post-editing step has no counterpart here).  Placeholders are kept verbatim (a test checks
  every template in every language).  Templates without a translation stay English and the
  task records ``inputs["language_fallback"] = "template"``.
* **Entity labels**: country names from CLDR territory names (Babel, by ISO-3166 alpha-2 code);
  city and admin-1 names have no language-tagged source offline (GeoNames ``alternateNames``
  is not packaged), so they stay English and are counted as fallbacks: every task records
  ``inputs["labels"] = [translated, total]`` and :func:`translated_share` reports the share per
  language.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any

#: Language code (ISO 639-1, as CLDR) -> (English name, script).
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "Latin"),
    "de": ("German", "Latin"),
    "es": ("Spanish", "Latin"),
    "ru": ("Russian", "Cyrillic"),
    "el": ("Greek", "Greek"),
    "fa": ("Persian", "Perso-Arabic"),
    "zh": ("Chinese (Simplified)", "Han"),
    "ja": ("Japanese", "Japanese (Kanji/Kana)"),
    "ka": ("Georgian", "Georgian"),
}

#: language -> template -> the question (paraphrase 0) in that language.
QUESTIONS: dict[str, dict[str, str]] = {
    "de": {
        "metric.distance": "Wie groß ist die geodätische Entfernung zwischen {a} und {b} in {unit}?",
        "metric.within": "Liegt {b} innerhalb von {r} km um {a}?",
        "direction.compass8": "In welcher Richtung (8-teilige Kompassrose, nach dem Anfangsazimut der Geodäte) liegt {b} von {a} aus?",
        "direction.north_of": "Liegt {a} weiter nördlich (auf höherer Breite) als {b}?",
        "coordinates.city": "Wie lauten die Koordinaten von {a}?",
        "admin.country": "In welchem Land liegt {a}?",
        "admin.in_country": "Liegt {a} in {country_name}?",
        "admin.capital": "Was ist die Hauptstadt von {country_name}?",
        "admin.count_in_admin1": "Wie viele Orte mit mindestens 15.000 Einwohnern liegen laut GeoNames in {admin1} ({country_name})?",
        "nearest.larger_city": "Welche Stadt mit mehr als {pop_text} Einwohnern (außer {a}) liegt {a} am nächsten?",
        "aggregation.largest_within": "Welcher Ort im Umkreis von {r} km um {a} hat (ohne {a}) laut GeoNames die meisten Einwohner?",
        "enumeration.top_in_admin1": "Nenne die drei bevölkerungsreichsten GeoNames-Orte in {admin1} ({country_name}), den größten zuerst.",
    },
    "es": {
        "metric.distance": "¿Cuál es la distancia geodésica entre {a} y {b}, en {unit}?",
        "metric.within": "¿Está {b} a menos de {r} km de {a}?",
        "direction.compass8": "¿En qué dirección (rosa de 8 rumbos, según el acimut geodésico inicial) se encuentra {b} desde {a}?",
        "direction.north_of": "¿Está {a} más al norte (a mayor latitud) que {b}?",
        "coordinates.city": "¿Cuáles son las coordenadas de {a}?",
        "admin.country": "¿En qué país está {a}?",
        "admin.in_country": "¿Está {a} en {country_name}?",
        "admin.capital": "¿Cuál es la capital de {country_name}?",
        "admin.count_in_admin1": "Según GeoNames, ¿cuántos lugares con al menos 15.000 habitantes hay en {admin1} ({country_name})?",
        "nearest.larger_city": "¿Qué ciudad de más de {pop_text} habitantes (aparte de {a}) es la más cercana a {a}?",
        "aggregation.largest_within": "¿Cuál es el lugar más poblado (GeoNames) a menos de {r} km de {a}, sin contar {a}?",
        "enumeration.top_in_admin1": "Enumera los tres lugares de GeoNames más poblados de {admin1} ({country_name}), del mayor al menor.",
    },
    "ru": {
        "metric.distance": "Каково геодезическое расстояние между {a} и {b} в {unit}?",
        "metric.within": "Находится ли {b} в пределах {r} км от {a}?",
        "direction.compass8": "В каком направлении (8 румбов компаса, по начальному геодезическому азимуту) от {a} находится {b}?",
        "direction.north_of": "Расположен ли {a} севернее (на большей широте), чем {b}?",
        "coordinates.city": "Каковы координаты {a}?",
        "admin.country": "В какой стране находится {a}?",
        "admin.in_country": "Находится ли {a} в стране {country_name}?",
        "admin.capital": "Какой город является столицей страны {country_name}?",
        "admin.count_in_admin1": "Сколько населённых пунктов с населением не менее 15 000 человек, по данным GeoNames, находится в {admin1} ({country_name})?",
        "nearest.larger_city": "Какой город с населением более {pop_text} человек (кроме {a}) ближе всего к {a}?",
        "aggregation.largest_within": "Какой населённый пункт в пределах {r} км от {a}, не считая {a}, самый многолюдный по данным GeoNames?",
        "enumeration.top_in_admin1": "Перечислите три самых населённых пункта GeoNames в {admin1} ({country_name}), начиная с крупнейшего.",
    },
    "el": {
        "metric.distance": "Ποια είναι η γεωδαισιακή απόσταση μεταξύ {a} και {b}, σε {unit};",
        "metric.within": "Βρίσκεται η {b} σε απόσταση έως {r} km από την {a};",
        "direction.compass8": "Προς ποια κατεύθυνση (πυξίδα 8 σημείων, με βάση το αρχικό γεωδαισιακό αζιμούθιο) βρίσκεται η {b} από την {a};",
        "direction.north_of": "Βρίσκεται η {a} βορειότερα (σε μεγαλύτερο γεωγραφικό πλάτος) από την {b};",
        "coordinates.city": "Ποιες είναι οι συντεταγμένες της {a};",
        "admin.country": "Σε ποια χώρα βρίσκεται η {a};",
        "admin.in_country": "Βρίσκεται η {a} στη χώρα {country_name};",
        "admin.capital": "Ποια είναι η πρωτεύουσα της χώρας {country_name};",
        "admin.count_in_admin1": "Σύμφωνα με το GeoNames, πόσοι οικισμοί με τουλάχιστον 15.000 κατοίκους βρίσκονται στην περιοχή {admin1} ({country_name});",
        "nearest.larger_city": "Ποια πόλη με περισσότερους από {pop_text} κατοίκους (εκτός από την {a}) είναι η πλησιέστερη στην {a};",
        "aggregation.largest_within": "Ποιος είναι ο πολυπληθέστερος οικισμός (GeoNames) σε ακτίνα {r} km από την {a}, χωρίς να μετράει η {a};",
        "enumeration.top_in_admin1": "Αναφέρετε τους τρεις πολυπληθέστερους οικισμούς του GeoNames στην περιοχή {admin1} ({country_name}), ξεκινώντας από τον μεγαλύτερο.",
    },
    "fa": {
        "metric.distance": "فاصلهٔ ژئودزیک میان {a} و {b} به {unit} چقدر است؟",
        "metric.within": "آیا {b} در فاصلهٔ {r} کیلومتری {a} قرار دارد؟",
        "direction.compass8": "{b} در کدام جهت (قطب‌نمای ۸ جهتی، بر پایهٔ سمت‌الرأس آغازین ژئودزیک) نسبت به {a} قرار دارد؟",
        "direction.north_of": "آیا {a} شمالی‌تر (در عرض جغرافیایی بالاتر) از {b} است؟",
        "coordinates.city": "مختصات {a} چیست؟",
        "admin.country": "{a} در کدام کشور است؟",
        "admin.in_country": "آیا {a} در {country_name} است؟",
        "admin.capital": "پایتخت {country_name} کدام شهر است؟",
        "admin.count_in_admin1": "بر پایهٔ GeoNames، چند مکان با دست‌کم ۱۵٬۰۰۰ نفر جمعیت در {admin1} ({country_name}) قرار دارد؟",
        "nearest.larger_city": "نزدیک‌ترین شهر با بیش از {pop_text} نفر جمعیت به {a} (به جز خود {a}) کدام است؟",
        "aggregation.largest_within": "پرجمعیت‌ترین مکان (GeoNames) در شعاع {r} کیلومتری {a}، بدون احتساب {a}، کدام است؟",
        "enumeration.top_in_admin1": "سه مکان پرجمعیت GeoNames در {admin1} ({country_name}) را به ترتیب از بزرگ‌ترین نام ببرید.",
    },
    "zh": {
        "metric.distance": "{a}与{b}之间的大地线距离是多少（单位：{unit}）？",
        "metric.within": "{b}是否位于{a}周围{r}公里以内？",
        "direction.compass8": "按初始大地方位角（八方位罗盘），{b}位于{a}的哪个方向？",
        "direction.north_of": "{a}是否比{b}更靠北（纬度更高）？",
        "coordinates.city": "{a}的坐标是什么？",
        "admin.country": "{a}位于哪个国家？",
        "admin.in_country": "{a}是否位于{country_name}？",
        "admin.capital": "{country_name}的首都是哪座城市？",
        "admin.count_in_admin1": "根据GeoNames，{admin1}（{country_name}）有多少个人口至少15,000的地点？",
        "nearest.larger_city": "除{a}本身外，离{a}最近的人口超过{pop_text}的城市是哪座？",
        "aggregation.largest_within": "在{a}周围{r}公里以内（不含{a}），GeoNames中人口最多的地点是哪个？",
        "enumeration.top_in_admin1": "按人口从多到少列出{admin1}（{country_name}）人口最多的三个GeoNames地点。",
    },
    "ja": {
        "metric.distance": "{a}と{b}の間の測地線距離は何{unit}ですか？",
        "metric.within": "{b}は{a}から{r} km以内にありますか？",
        "direction.compass8": "{b}は{a}から見てどの方角（8方位、測地線の初期方位角による）にありますか？",
        "direction.north_of": "{a}は{b}よりも北（高緯度）にありますか？",
        "coordinates.city": "{a}の座標は何ですか？",
        "admin.country": "{a}はどの国にありますか？",
        "admin.in_country": "{a}は{country_name}にありますか？",
        "admin.capital": "{country_name}の首都はどこですか？",
        "admin.count_in_admin1": "GeoNamesによると、{admin1}（{country_name}）には人口15,000人以上の地点がいくつありますか？",
        "nearest.larger_city": "人口{pop_text}人を超える都市のうち、{a}以外で{a}に最も近いのはどこですか？",
        "aggregation.largest_within": "{a}から{r} km以内で、{a}を除いて最も人口の多い地点（GeoNames）はどこですか？",
        "enumeration.top_in_admin1": "{admin1}（{country_name}）で人口の多いGeoNamesの地点を上位3つ、大きい順に挙げてください。",
    },
    "ka": {
        "metric.distance": "რა არის გეოდეზიური მანძილი {a}-სა და {b}-ს შორის, {unit}-ში?",
        "metric.within": "მდებარეობს თუ არა {b} {a}-დან {r} კმ-ის ფარგლებში?",
        "direction.compass8": "რა მიმართულებით (8-წერტილიანი კომპასი, საწყისი გეოდეზიური აზიმუტით) მდებარეობს {b} {a}-დან?",
        "direction.north_of": "მდებარეობს თუ არა {a} უფრო ჩრდილოეთით (უფრო მაღალ განედზე), ვიდრე {b}?",
        "coordinates.city": "რა არის {a}-ს კოორდინატები?",
        "admin.country": "რომელ ქვეყანაშია {a}?",
        "admin.in_country": "არის თუ არა {a} ქვეყანაში {country_name}?",
        "admin.capital": "რომელია ქვეყნის {country_name} დედაქალაქი?",
        "admin.count_in_admin1": "GeoNames-ის მიხედვით, რამდენი დასახლებაა არანაკლებ 15 000 მცხოვრებით {admin1}-ში ({country_name})?",
        "nearest.larger_city": "რომელი ქალაქი, რომლის მოსახლეობა {pop_text}-ს აღემატება ({a}-ს გარდა), არის {a}-სთან ყველაზე ახლოს?",
        "aggregation.largest_within": "რომელია ყველაზე მჭიდროდ დასახლებული პუნქტი (GeoNames) {a}-დან {r} კმ-ის რადიუსში, {a}-ს გამოკლებით?",
        "enumeration.top_in_admin1": "ჩამოთვალეთ GeoNames-ის სამი ყველაზე დიდი დასახლება {admin1}-ში ({country_name}), უდიდესიდან დაწყებული.",
    },
}


@lru_cache(maxsize=None)
def _territories(lang: str) -> dict[str, str]:
    from babel import Locale
    return dict(Locale.parse(lang).territories)


def country_label(iso2: str, english: str, lang: str) -> tuple[str, bool]:
    """The CLDR name of country ``iso2`` in ``lang`` (Babel), or ``english`` when CLDR has none.
    Returns ``(label, translated)``."""
    if lang == "en":
        return english, True
    name = _territories(lang).get(str(iso2).upper())
    return (name, True) if name else (english, False)


def localise_values(values: dict[str, str], binding: dict[str, Any], roles: dict[str, str],
                    lang: str) -> tuple[dict[str, str], int, int]:
    """Placeholder texts with entity labels in ``lang``; returns ``(values, translated, total)``
    counting every entity label (each city, each country name) once.

    City labels stay English (no offline language-tagged source); their country part
    (``Name, Country``) is replaced by its CLDR name.  A ``{country_name}`` parameter is looked
    up by the binding's ``cc`` (ISO alpha-2).
    """
    from .context import get_context
    ctx = get_context()
    out = dict(values)
    done = total = 0
    for role, eid in binding.get("ids", {}).items():
        if role not in out or not isinstance(eid, str):
            continue
        if eid.startswith("gn:"):
            row = ctx.city(eid)
            total += 1  # the city's own name: English fallback (counted as not translated)
            cname = str(row["country_name"])
            if cname and out[role].endswith(", " + cname):
                label, ok = country_label(str(row["iso2"]), cname, lang)
                out[role] = out[role][: -len(cname)] + label
                total += 1
                done += ok
        elif eid.startswith("ne:"):
            total += 1
            row = ctx.countries.loc[eid[3:]] if eid[3:] in ctx.countries.index else None
            if row is not None and row.get("iso2"):
                label, ok = country_label(str(row["iso2"]), out[role], lang)
                out[role] = label
                done += ok
        else:
            total += 1  # simulated places keep their names
    cc = binding.get("params", {}).get("cc")
    if "country_name" in out and cc:
        label, ok = country_label(cc, out["country_name"], lang)
        out["country_name"] = label
        total += 1
        done += ok
    if "admin1" in out:
        total += 1
    if lang == "en":
        done = total
    return out, done, total


def question_in(tid: str, values: dict[str, str], binding: dict[str, Any], roles: dict[str, str],
                lang: str) -> tuple[str | None, int, int]:
    """The question of template ``tid`` in ``lang`` (None when no translation) and the label
    counts of :func:`localise_values`.

    Raises:
        ValueError: an unknown language.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    text = QUESTIONS.get(lang, {}).get(tid)
    vals, done, total = localise_values(values, binding, roles, lang)
    return (None if text is None else text.format(**vals)), done, total
