#!/usr/bin/env bash
# Regenerate bench/replays/manifest.json: every repository's labels, from its mirror at its
# commit, with its ecosystem's tool (see bench/README.md, "replay.py"). Run from the checkout:
#   bash bench/replays/regenerate.sh [MIRRORS]     (default $REPLAY_MIRRORS, else /work/.mirror)
# Needs python3, node/npm, go, cargo/rustc, javac with Debian's junit5/junit4, ruby with
# ruby-minitest, php with Debian's phpunit and composer, java 17 (javap, jdeps) with JUnit 4.13.2
# and hamcrest-core 1.3 in ~/.m2, npm's kotlin-compiler, and Debian's mono-mcs, mono-devel and
# libnunit-cil-dev (Mono 6.8's mcs, NUnit 2.6.3). ESBUILD=path reuses an esbuild binary,
# KOTLINC_LIB=path a kotlinc distribution's lib folder.
set -euo pipefail
M=${1:-${REPLAY_MIRRORS:-/work/.mirror}}
PY=${PYTHON:-.venv/bin/python}
label() { "$PY" -m "bench.replays.label_$1" --git-dir "$M/$2/repo" --repository "${2/+//}" "${@:3}"; }
common=(--per-side 2 --history 1)

label python pypa+packaging --commit 053c884615f2e83d80705251b447769ec2599653 --roots src "${common[@]}" --removals 4 \
  --tests tests/test_version.py tests/test_markers.py tests/test_tags.py tests/test_licenses.py \
  tests/test_utils.py tests/test_elffile.py tests/test_dependency_groups.py
label python marshmallow-code+marshmallow --commit 341b927f219205704728c05cd61f04d7e9727523 --roots src \
  "${common[@]}" --removals 4 --tests tests/test_error_store.py tests/test_utils.py tests/test_validate.py \
  tests/test_exceptions.py tests/test_registry.py tests/test_fields.py
esbuild=(${ESBUILD:+--esbuild "$ESBUILD"})
label js pinojs+pino --commit b394c2c16ac6a8919cd33d7f5684a01baca1096f "${esbuild[@]}" "${common[@]}" --removals 5 \
  --tests test/basic.test.js test/levels.test.js test/multistream.test.js test/redact.test.js \
  test/transport-stream.test.js test/browser.test.js test/crlf.test.js
label js remeda+remeda --commit 3b72f9fb6e5174243954467186301d352b742699 "${esbuild[@]}" "${common[@]}" --removals 6 \
  --tests packages/remeda/src/{sortBy,mapValues,pipe,chunk,clone,conditional,groupBy}.test.ts
label go pelletier+go-toml --commit 86608d7fca88a6a61539ff7e9f1a942a428654d8 "${common[@]}" --removals 5 \
  --tests internal/tracker/seen_test.go internal/danger/danger_test.go unstable/parser_test.go \
  internal/cli/cli_test.go cmd/tomll/main_test.go unmarshaler_test.go errors_test.go
label go BurntSushi+toml --commit d733fc535e4a9f3c454e421a87b90ade5d49bf31 "${common[@]}" --removals 5 \
  --tests decode_test.go lex_test.go toml_test.go
label rust toml-rs+toml --commit 5538279d83d3c1b348b84a35ee1ed5d799c13b94 "${common[@]}" --removals 5 \
  --tests crates/toml_datetime/tests/parse.rs crates/serde_spanned/tests/test.rs \
  crates/toml_writer/tests/float.rs crates/toml/tests/decoder.rs crates/toml_edit/tests/serde/main.rs \
  crates/toml_parser/tests/testsuite/main.rs
label java jhy+jsoup --commit 46b620860af930eedc193a705eaf7cea5aec89a6 "${common[@]}" --removals 5 \
  --tests src/test/java/org/jsoup/{internal/SoftPoolTest,helper/ValidateTest,helper/RegexTest,parser/CharacterReaderTest,internal/QuietAppendableTest,helper/CookieUtilTest,SerializationExceptionTest}.java
label ruby ruby+rake --commit 474500ab2eec41ef28068e18e30f84fa412a098f "${common[@]}" --removals 5 \
  --tests test/test_rake_{clean,package_task,makefile_loader,test_task,path_map,linked_list,cpu_counter}.rb
# v1.3.0: the last release whose tests Debian's PHPUnit 9 runs (later ones use PHPUnit 10's attributes)
label php nikic+FastRoute --commit 181d480e08d9476e61381e04a71b34dc0432e812 --per-side 3 --history 1 --removals 5 \
  --tests test/Dispatcher/{GroupCountBased,GroupPosBased,CharCountBased}Test.php \
  test/RouteCollectorTest.php test/RouteParser/StdTest.php
kotlinc=(${KOTLINC_LIB:+--kotlinc-lib "$KOTLINC_LIB"})
label kotlin JetBrains+markdown --commit f2280ffb6623869d130c418606bddced66a118f9 "${kotlinc[@]}" "${common[@]}" \
  --removals 2 --options="-language-version 2.0 -api-version 2.0 -opt-in=kotlin.experimental.ExperimentalNativeApi" \
  --fragment common=src/commonMain/kotlin,src/commonTest/kotlin,src/fileBasedTest/kotlin \
  jvm=src/jvmMain/kotlin,src/jvmTest/kotlin \
  --tests src/commonTest/kotlin/org/intellij/markdown/{CommonDefsTest,URITest,SpecTest,CommonMarkSpecTest}.kt \
  src/fileBasedTest/kotlin/org/intellij/markdown/{HtmlIndentTrimmerTest,MarkdownParsingTest}.kt \
  src/jvmTest/kotlin/org/intellij/markdown/HtmlGeneratorJvmTest.kt
# kotlin-result's own compiler options (buildSrc's kotlin-conventions, kotlin-result/build.gradle.kts).
r=kotlin-result/src/commonTest/kotlin/com/github/michaelbull/result
label kotlin michaelbull+kotlin-result --commit aed7438b2bd92adc704b5022e64cddf263e38800 "${kotlinc[@]}" \
  "${common[@]}" --options="-opt-in=kotlin.contracts.ExperimentalContracts \
-opt-in=com.github.michaelbull.result.annotation.UnsafeResultValueAccess \
-opt-in=com.github.michaelbull.result.annotation.UnsafeResultErrorAccess -Xexpect-actual-classes \
-XXLanguage:+UnnamedLocalVariables -Xreturn-value-checker=full" \
  --fragment common=kotlin-result/src/commonMain/kotlin,kotlin-result/src/commonTest/kotlin \
  jvm=kotlin-result/src/jvmMain/kotlin --tests $r/{And,Binding,Get,Iterable,Try,Zip}Test.kt
# C#: the test's project and the projects it references, compiled as one library by mcs. MoreLINQ
# v2.3.0 has project.json projects (no .csproj); ini-parser is compiled against the .NET 4.7.1
# reference assemblies (Mono's own mscorlib has a System.Range that clashes with its Range).
label csharp morelinq+MoreLINQ --commit 3a5c967d290cdf5f9e292d18a40a40086023f490 "${common[@]}" \
  --sources MoreLinq MoreLinq.Test --references System.Data System.Data.DataSetExtensions System.Xml.Linq \
  Microsoft.CSharp --tests MoreLinq.Test/{Batch,Rank,ZipLongest,FillForward,ToDataTable,SortedMerge,Acquire}Test.cs
label csharp rickyah+ini-parser --commit d300241a75bec4dcabc0751c8690f3b12b3eaf43 "${common[@]}" --api 4.7.1-api \
  --sources src/IniParser src/IniParser.Tests \
  --tests src/IniParser.Tests/Integration/{ConfigurationOption,SchemeOption}Tests.cs \
  src/IniParser.Tests/Unit/Configuration/ConfigurationTests.cs src/IniParser.Tests/Unit/Format/IniFormatterTests.cs \
  src/IniParser.Tests/Unit/Model/{Section,StringBuffer}Tests.cs src/IniParser.Tests/Unit/Parser/ParserTests.cs
label csharp sprache+Sprache --commit a57e3f68d72c966af3e1c771c2afb992461eebfc "${common[@]}" \
  --sources src/Sprache src/Sprache.Tests \
  --tests src/Sprache.Tests/{Parse,Input,Result,Decimal,Regex}Tests.cs src/Sprache.Tests/Scenarios/CsvTests.cs \
  src/Sprache.Tests/Scenarios/StarDateTest.cs
# Held out until measured (2026-12-07), then added: repositories the walks had not been tuned on.
label python python-attrs+attrs --commit c1dc5dcba16ed827aa6dcad896b41a3afedb4e32 --roots src "${common[@]}" \
  --removals 3 --tests tests/test_{converters,cmp,config,validators,filters,funcs}.py
label python encode+httpx --commit ae1b9f66238f75ced3ced5e4485408435de10768 "${common[@]}" --removals 3 \
  --tests tests/test_multipart.py tests/client/test_redirects.py tests/models/test_headers.py \
  tests/test_api.py tests/test_main.py
label go spf13+cobra --commit adbc8813901bba65827259daa8e22ff94ec1f30e "${common[@]}" --removals 3 \
  --tests args_test.go command_test.go doc/md_docs_test.go doc/man_docs_test.go
label go go-chi+chi --commit 735ae2b87f8c733d616e809ae86e0985c1bc3350 "${common[@]}" --removals 3 \
  --tests pattern_test.go middleware/{strip,compress,logger,client_ip}_test.go
label js expressjs+express --commit a3714473feb3d2908add734d340e7755fd85e0a3 "${esbuild[@]}" "${common[@]}" \
  --removals 3 --tests test/Route.js test/Router.js test/acceptance/auth.js test/res.send.js test/req.query.js
label js date-fns+date-fns --commit dd66398305c2b015fba3c1b3d31ccff42ee8d4cf "${esbuild[@]}" "${common[@]}" \
  --removals 3 --tests src/{add,getWeekOfMonth,formatISO,formatDuration,_lib/addLeadingZeros}/test.ts
label rust dtolnay+semver --commit 8591f2344b52b31d85b538de58b76a676fe9ff90 "${common[@]}" --removals 3 \
  --tests tests/test_version.rs tests/test_version_req.rs tests/test_identifier.rs
label java apache+commons-cli --commit 0a68ae0e826bb08eb59bda9bae7ec5d84008b62a "${common[@]}" --removals 3 \
  --tests src/test/java/org/apache/commons/cli/{ValuesTest,OptionsTest,OptionCountTest,DisablePartialMatchingTest}.java \
  src/test/java/org/apache/commons/cli/bug/BugCLI133Test.java
label ruby ruby+csv --commit b36c16061ac14aa6ce2e6eb9c3cd60c07a688254 "${common[@]}" --removals 3 \
  --load-path lib test --tests test/csv/interface/test_{read,write}.rb test/csv/parse/test_{convert,header}.rb
label ruby ruby+optparse --commit a95819f9a07b613709f6dda28551750db32348a2 "${common[@]}" --removals 3 \
  --load-path lib test/lib --tests test/optparse/test_{acceptable,getopts,kwargs,did_you_mean}.rb
