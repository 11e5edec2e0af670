"""PostgreSQL only: a cheaper `spoke_recall_lexemes(text)`, with the same output for every text
(issue 30; docs/recall.md, docs/performance.md). The GIN index `record_recall_lexemes` holds the
function's outputs, so this is only a safe CREATE OR REPLACE (no index rebuild) because the new
function returns the very same tsvector as 0002's for every input. Why it does:

1. The fold. 0002 folds with `translate(doc, FOLD_FROM, FOLD_TO)` when the text has any
   non-ASCII character, else with `lower(doc COLLATE "C")`; this one uses `translate` only when
   the text has a character in U+00C0–U+052F. `FOLD_FROM` is A–Z plus characters of
   U+00C0–U+052F only (memory.engine.rank._fold_table builds it from those two ranges; a test
   checks it), and `translate` maps A–Z to a–z and changes no character outside `FOLD_FROM`. So
   on a text without a character of U+00C0–U+052F, `translate` changes exactly A–Z to a–z, which
   is what `lower(... COLLATE "C")` does (PostgreSQL's C-collation lower() folds ASCII A–Z only,
   byte by byte; a UTF-8 multi-byte character's bytes are all >= 0x80 and untouched). Both
   functions therefore fold every text to the same string F.
2. The tokens. A separator run is `[sep]+`; every other character is a token character. 0002
   replaces each match of `[^sep]{201,}` in F by one space and then splits on `[sep]+` and
   removes the empty pieces. PostgreSQL's regex finds, from the left, the longest match at the
   first position where one starts: a match starts only where 201 or more token characters
   follow, the first such position in a maximal run of token characters is the run's start
   (a run shorter than 201 has no such position at all), and the longest match from there is the
   whole run (it stops only at a separator or the end). The search resumes after the run. So
   0002 replaces exactly the maximal runs of length >= 201 by a space, which is a separator: the
   maximal runs of the result are the runs of F of length <= 200, in order, and splitting on
   `[sep]+` and removing '' gives exactly them. This function splits F itself on `[sep]+`,
   whose non-empty pieces are all of F's maximal runs, in order, and keeps those of length
   <= 200 (`length()` counts characters, as the regex's `{201,}` does). The same array, so the
   same `array_to_tsvector`. The empty string gives an empty array and an empty tsvector in
   both; NULL gives NULL (STRICT) in both.

Cost: the counted repetition `[^sep]{201,}` scanned every text (the bulk of 0002's time); the fold
of a text whose only non-ASCII characters are punctuation such as ’ — “ ” … no longer goes
through `translate` (a linear search of the ~700-character table per character). Measured in
docs/performance.md (issue 30). tests/memory/recall/test_lexical.py compares this function with
0002's on adversarial texts (hypothesis: tokens of 199–202 and thousands of characters, every
separator class, Unicode in and out of the fold range, astral characters, empty strings) and
checks the SQL here still equals `rank.lexemes_function_sql()`."""

from django.db import migrations

RECALL_LEXEMES_SQL = "CREATE OR REPLACE FUNCTION spoke_recall_lexemes(doc text) RETURNS tsvector LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 10000 AS $fn$ BEGIN RETURN array_to_tsvector(ARRAY(SELECT t FROM unnest(regexp_split_to_array(CASE WHEN doc ~ '[\\u00c0-\\u052f]' THEN translate(doc, 'ABCDEFGHIJKLMNOPQRSTUVWXYZÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞĀĂĄĆĈĊČĎĐĒĔĖĘĚĜĞĠĢĤĦĨĪĬĮĲĴĶĹĻĽĿŁŃŅŇŊŌŎŐŒŔŖŘŚŜŞŠŢŤŦŨŪŬŮŰŲŴŶŸŹŻŽƁƂƄƆƇƉƊƋƎƏƐƑƓƔƖƗƘƜƝƟƠƢƤƦƧƩƬƮƯƱƲƳƵƷƸƼǄǅǇǈǊǋǍǏǑǓǕǗǙǛǞǠǢǤǦǨǪǬǮǱǲǴǶǷǸǺǼǾȀȂȄȆȈȊȌȎȐȒȔȖȘȚȜȞȠȢȤȦȨȪȬȮȰȲȺȻȽȾɁɃɄɅɆɈɊɌɎͰͲͶͿΆΈΉΊΌΎΏΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩΪΫϏϘϚϜϞϠϢϤϦϨϪϬϮϴϷϹϺϽϾϿЀЁЂЃЄЅІЇЈЉЊЋЌЍЎЏАБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЪЫЬЭЮЯѠѢѤѦѨѪѬѮѰѲѴѶѸѺѼѾҀҊҌҎҐҒҔҖҘҚҜҞҠҢҤҦҨҪҬҮҰҲҴҶҸҺҼҾӀӁӃӅӇӉӋӍӐӒӔӖӘӚӜӞӠӢӤӦӨӪӬӮӰӲӴӶӸӺӼӾԀԂԄԆԈԊԌԎԐԒԔԖԘԚԜԞԠԢԤԦԨԪԬԮ', 'abcdefghijklmnopqrstuvwxyzàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþāăąćĉċčďđēĕėęěĝğġģĥħĩīĭįĳĵķĺļľŀłńņňŋōŏőœŕŗřśŝşšţťŧũūŭůűųŵŷÿźżžɓƃƅɔƈɖɗƌǝəɛƒɠɣɩɨƙɯɲɵơƣƥʀƨʃƭʈưʊʋƴƶʒƹƽǆǆǉǉǌǌǎǐǒǔǖǘǚǜǟǡǣǥǧǩǫǭǯǳǳǵƕƿǹǻǽǿȁȃȅȇȉȋȍȏȑȓȕȗșțȝȟƞȣȥȧȩȫȭȯȱȳⱥȼƚⱦɂƀʉʌɇɉɋɍɏͱͳͷϳάέήίόύώαβγδεζηθικλμνξοπρστυφχψωϊϋϗϙϛϝϟϡϣϥϧϩϫϭϯθϸϲϻͻͼͽѐёђѓєѕіїјљњћќѝўџабвгдежзийклмнопрстуфхцчшщъыьэюяѡѣѥѧѩѫѭѯѱѳѵѷѹѻѽѿҁҋҍҏґғҕҗҙқҝҟҡңҥҧҩҫҭүұҳҵҷҹһҽҿӏӂӄӆӈӊӌӎӑӓӕӗәӛӝӟӡӣӥӧөӫӭӯӱӳӵӷӹӻӽӿԁԃԅԇԉԋԍԏԑԓԕԗԙԛԝԟԡԣԥԧԩԫԭԯ') ELSE lower(doc COLLATE \"C\") END, '[\\u0001-\\u002f\\u003a-\\u0040\\u005b-\\u0060\\u007b-\\u00bf\\u00d7-\\u00d7\\u00f7-\\u00f7\\u2000-\\u206f\\u2190-\\u2bff\\u3000-\\u3003\\ufeff-\\ufeff]+')) t WHERE t <> '' AND length(t) <= 200)); END $fn$"


def forward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(RECALL_LEXEMES_SQL)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    from importlib import import_module

    schema_editor.execute(import_module("memory.migrations.0002_recall_lexemes").RECALL_LEXEMES_SQL)


class Migration(migrations.Migration):
    dependencies = [("memory", "0018_embedding_subject_space")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
