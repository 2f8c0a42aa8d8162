"""The Ruby import walk: what a spec or test file loads, read by a small tokenizer."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from bot.shared import TreeFile
from bot.triage.imports import ImportWalk, Source, Tree, walk
from bot.triage.imports.heredocs import tokens
from bot.triage.imports.ruby import _TOKEN, Load, calls_of, constants_of, loads_of, rspec_options
from tests.test_imports_walk import depths, layout
from tests.test_imports_walk import walked as walk_to_end


def walked(test_file: str, files: Mapping[str, Source], tree: Tree | None = None) -> ImportWalk:
    return walk_to_end(test_file, files, None, tree)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("require 'a/b'\n", [Load("require", "a/b", "a/b")]),
        ('require("a")\n', [Load("require", "a", "a")]),
        ("require_relative '../lib/x'\n", [Load("relative", "../lib/x", "../lib/x")]),
        ("load 'tasks/x.rb'\n", [Load("require", "tasks/x.rb", "tasks/x.rb")]),
        # Loaded when the constant is first used.
        (
            'autoload :Builder, "rack/builder"\n',
            [Load("require", "rack/builder", "rack/builder", "Builder")],
        ),
        (
            "require File.expand_path('../lib/x', __dir__)\n",
            [Load("relative", "../lib/x", "../lib/x")],
        ),
        (
            'require File.expand_path("../../lib/x", __FILE__)\n',
            [Load("file", "../../lib/x", "../../lib/x")],
        ),
        (
            "require File.join(File.dirname(__FILE__), 'support', 'x')\n",
            [Load("relative", "support", "support")],
        ),
        ("require File.dirname(__FILE__) + '/x'\n", [Load("relative", "x", "/x")]),
        # Comments, embedded documents and strings are not loads.
        ("# require 'a'\nx = 1 # require 'b'\n", []),
        ("=begin\nrequire 'a'\n=end\nrequire 'b'\n", [Load("require", "b", "b")]),
        ("puts \"require 'a'\"\nputs 'require \"b\"'\n", []),
        ('x = "#{require_it} # not a comment"\nrequire "c"\n', [Load("require", "c", "c")]),
        # Built from a variable: not a literal, left out; a path of a Ruby file written in a
        # string counts (it may be loaded through a variable), and so do the literal parts of
        # a `File.join` after the last one built at run time.
        ("require name\nputs 'x'\n", []),
        ("x = 'lib/a.rb'\ny = 'a.txt'\n", [Load("require", "lib/a.rb", "lib/a.rb")]),
        ("parse_file 'builder/app'\n", [Load("require", "builder/app", "builder/app")]),
        (
            'load File.join(@lib, "rake", "a.rb")\nputs "b"\n',
            [Load("require", "rake/a.rb", "rake/a.rb"), Load("require", "a.rb", "a.rb")],
        ),
        ("x = File.join(@lib, 'a', name)\n", []),
        ("require_relative path; y = 'z'\n", []),
    ],
)
def test_loads_of(source: str, expected: list[Load]) -> None:
    assert loads_of(source) == expected


def test_rspec_options_name_required_files_and_load_path_folders() -> None:
    text = "--require spec_helper\n-r rails_helper\n--format documentation\n-Ispec/lib\n"
    text += "--include=shared:more # a comment\n"
    assert rspec_options(text) == (["spec_helper", "rails_helper"], ["spec/lib", "shared", "more"])


SHOP: dict[str, Source] = {
    ".rspec": "--require spec_helper\n",
    "lib/shop.rb": "require 'shop/cart'\n",
    "lib/shop/cart.rb": "require_relative 'tax'\n",
    "lib/shop/tax.rb": "",
    "lib/shop/unused.rb": "",
    "spec/spec_helper.rb": "require 'shop'\n",
    "spec/support/fake.rb": "",
    "spec/shop/cart_spec.rb": "require 'shop/cart'\nrequire 'support/fake'\nrequire 'json'\n",
}


def test_a_spec_reaches_lib_through_the_load_path_and_the_helper_runs_for_it() -> None:
    result = walked("spec/shop/cart_spec.rb", SHOP)
    assert depths(result) == {
        "spec/spec_helper.rb": 0,
        "lib/shop/cart.rb": 1,
        "spec/support/fake.rb": 1,  # spec/ is on rspec's load path
        "lib/shop.rb": 1,
        "lib/shop/tax.rb": 2,
    }
    [helper] = [r for r in result.reached if r.path == "spec/spec_helper.rb"]
    assert helper.why == "a file .rspec requires"
    assert not result.partial  # tax.rb is read too: the walk has no depth limit


def test_conventional_helpers_run_without_rspec_naming_them() -> None:
    files = {k: v for k, v in SHOP.items() if k != ".rspec"}
    files["spec/rails_helper.rb"] = "require 'spec_helper'\n"
    result = walked("spec/shop/cart_spec.rb", files)
    found = {r.path: r.why for r in result.reached if not r.chain}
    assert found == {
        "spec/spec_helper.rb": "a test helper",
        "spec/rails_helper.rb": "a test helper",
    }


def test_a_minitest_test_helper_and_require_relative_across_folders() -> None:
    files: dict[str, Source] = {
        "test/test_helper.rb": "require 'minitest/autorun'\n",
        "test/models/order_test.rb": "require_relative '../../lib/order'\n",
        "lib/order.rb": "require 'order/line'\n",
        "lib/order/line.rb": "",
    }
    result = walked("test/models/order_test.rb", files)
    assert depths(result) == {"test/test_helper.rb": 0, "lib/order.rb": 1, "lib/order/line.rb": 2}


def test_a_gem_in_a_subfolder_uses_its_own_lib_first() -> None:
    files: dict[str, Source] = {
        "lib/util.rb": "",
        "gems/billing/lib/util.rb": "",
        "gems/billing/spec/util_spec.rb": "require 'util'\nrequire './lib/util'\n",
    }
    result = walked("gems/billing/spec/util_spec.rb", files)
    assert depths(result) == {"gems/billing/lib/util.rb": 1}


def test_a_require_that_climbs_out_of_the_repository_is_not_ours() -> None:
    files: dict[str, Source] = {"spec/a_spec.rb": "require_relative '../../x'\n", "x.rb": ""}
    assert depths(walked("spec/a_spec.rb", files)) == {}


def test_a_real_minitest_suite_rack() -> None:
    tree, files = layout("rack")
    result = walked("test/spec_mock_request.rb", files, tree=tree)
    found = depths(result)
    assert found["test/helper.rb"] == 1  # require_relative 'helper'
    assert found["lib/rack/mock_request.rb"] == 1  # require_relative '../lib/rack/mock_request'
    assert found["lib/rack.rb"] == 2  # helper.rb: require_relative '../lib/rack'
    assert found["lib/rack/mock_response.rb"] == 2  # mock_request.rb: require_relative
    # lib/rack.rb autoloads every middleware (`autoload :Builder, "rack/builder"`): loaded
    # when its constant is used, so only those the walk's files name (Ruby loaded 22 files
    # running this test; the walk, complete, reaches 24).
    assert found["lib/rack/mime.rb"] == 3  # autoload :Mime; utils.rb names Rack::Mime
    assert not {"lib/rack/builder.rb", "lib/rack/directory.rb", "lib/rack/files.rb"} & set(found)
    assert not result.partial


def test_a_real_rspec_suite_httparty() -> None:
    tree, files = layout("httparty")
    result = walked("spec/httparty/request_spec.rb", files, tree=tree)
    found = depths(result)
    # require 'spec_helper' (a test helper: it runs), which requires "httparty" (lib/), which
    # requires "httparty/request": the changed file two levels down.
    assert found["spec/spec_helper.rb"] == 0
    assert found["lib/httparty.rb"] == 1
    assert found["lib/httparty/request.rb"] == 2
    assert "lib/httparty/request/multipart_boundary.rb" not in found


def test_an_unclosed_string_ends_at_its_line_and_the_scan_stays_one_pass() -> None:
    # 60,000 quotes that each open a string with no end: a scan that looked for each one's
    # end again would take minutes; the next line is code again.
    hostile = "'\\" * 30_000 + 'x\n"\\' * 30_000 + "x\nrequire 'after'\n=begin\n" * 2
    assert loads_of(hostile) == [Load("require", "after", "after")]


def test_rails_autoloading_finds_the_constants_a_spec_names() -> None:
    """Zeitwerk's rule: `Checkout::Payment` is `checkout/payment.rb` under a folder of
    `app/` (or `lib/`), and the namespace `Checkout` may have its own `checkout.rb`."""
    files = {
        "spec/checkout/payment_spec.rb": (
            'require "rails_helper"\n\nRSpec.describe Checkout::Payment do\n'
            "  it { expect(HTMLReceipt.new).to be_valid } # Gateway::Stripe in a comment\n"
            '  let(:note) { "Mailer::Receipt in a string" }\nend\n'
        ),
        "spec/rails_helper.rb": "",
        "app/models/checkout.rb": "module Checkout; end\n",
        "app/models/checkout/payment.rb": "class Checkout::Payment; end\n",
        "app/services/html_receipt.rb": "class HTMLReceipt; end\n",
        "app/services/gateway/stripe.rb": "",
        "app/mailers/mailer/receipt.rb": "",
        "lib/tasks/x.rb": "",
    }
    tree = Tree(
        {p: TreeFile(sha=f"{n:040x}", size=len(t)) for n, (p, t) in enumerate(files.items())}
    )

    found = walk("spec/checkout/payment_spec.rb", tree, files)

    assert {(r.path, r.chain[-1].module) for r in found.reached if r.chain} == {
        ("app/models/checkout.rb", "Checkout"),
        ("app/models/checkout/payment.rb", "Checkout::Payment"),
        ("app/services/html_receipt.rb", "HTMLReceipt"),
    }
    assert constants_of("x = ::Shop::Cart.new(Shop::Cart::Line)") == [
        "Shop::Cart",
        "Shop::Cart::Line",
    ]


def test_a_heredocs_requires_wait_for_the_method_that_writes_it_out_rake() -> None:
    """rake's test/support/rakefile_definitions.rb: each method writes a Rakefile from a
    heredoc (`rakefile <<~RAKEFILE ... require "rake/testtask"`) for rake to run in another
    process; the requires run when the method does."""
    _, files = layout("rake")
    definitions = loads_of(str(files["test/support/rakefile_definitions.rb"]))
    # (The paths of the files they write, "a_test.rb", "build/copies", count as well: none
    # is on the load path.)
    required = {"rake/testtask", "rake/loaders/makefile", "minitest/autorun", "rake/file_list"}
    assert [(load.path, load.when) for load in definitions if load.path in required] == [
        ("rake/testtask", "rakefile_test_task"),
        ("rake/testtask", "rakefile_test_task_verbose"),
        ("rake/loaders/makefile", "rakefile_imports"),
        ("rake/testtask", "rakefile_test_signal"),
        ("rake/testtask", "rakefile_failing_test_task"),
        ("minitest/autorun", "rakefile_failing_test_task"),
        ("rake/file_list", "rakefile_stand_alone_filelist"),
    ]
    # lib/rake/cpu_counter.rb: a class_eval outside any method runs when the file loads (its
    # `<<-'end;'` terminator is no identifier: read as code, which counts it as well).
    counter = loads_of(str(files["lib/rake/cpu_counter.rb"]))
    assert Load("require", "rbconfig", "rbconfig") in counter
    # lib/rake/file_utils_ext.rb: module_eval(<<-EOS) in a block of the module's body.
    ext = tokens(str(files["lib/rake/file_utils_ext.rb"]), _TOKEN)
    assert [kind for kind, _ in ext if kind.startswith("heredoc")] == ["heredoc:"]


def test_a_real_unit_test_does_not_reach_what_only_a_heredoc_of_its_helpers_requires() -> None:
    """rake at 474500ab: test_rake_clean.rb requires test/helper.rb, which requires the
    Rakefile definitions; it calls none of them, so lib/rake/testtask.rb (which only the
    heredocs require) is not its code. test_rake_functional.rb calls `rakefile_test_task`
    and `rakefile_imports`, and runs rake on what they write: it reaches both."""
    tree, files = layout("rake")
    clean = walked("test/test_rake_clean.rb", files, tree=tree)
    assert not clean.partial
    assert "test/support/rakefile_definitions.rb" in clean.files
    assert "lib/rake/clean.rb" in clean.files
    assert not {"lib/rake/testtask.rb", "lib/rake/loaders/makefile.rb"} & clean.files

    functional = walked("test/test_rake_functional.rb", files, tree=tree)
    assert not functional.partial
    chains = {r.path: [s.importer for s in r.chain] for r in functional.reached}
    definitions = ["test/test_rake_functional.rb", "test/helper.rb"]
    definitions.append("test/support/rakefile_definitions.rb")
    assert chains["lib/rake/testtask.rb"] == definitions
    assert chains["lib/rake/loaders/makefile.rb"] == definitions
    assert chains["lib/rake/tasklib.rb"] == [*definitions, "lib/rake/testtask.rb"]


HEREDOC_IN_HELPER: dict[str, Source] = {
    "test/helper.rb": (
        "module Definitions\n  def write_rakefile\n    File.write 'Rakefile', <<~RAKE\n"
        "      require 'tool/task'\n    RAKE\n  end\nend\n"
    ),
    "lib/tool/task.rb": "",
    "lib/tool/runner.rb": "",
}


@pytest.mark.parametrize(
    ("test", "reached"),
    [
        ("require_relative 'helper'\n", False),
        ("require_relative 'helper'\ndef test_x\n  write_rakefile\nend\n", True),
        ("require_relative 'helper'\nsend(:write_rakefile)\n", True),
        ("require_relative 'helper'\n%w[rakefile].each { |k| send(\"write_#{k}\") }\n", True),
        ("require_relative 'helper'\nassert_equal 'a#{sep}b', x\n", False),
        # Named in a file the test reaches later than the helper.
        ("require_relative 'helper'\nrequire 'tool/runner'\n", True),
    ],
)
def test_a_helpers_heredoc_runs_for_a_test_that_names_its_method(test: str, reached: bool) -> None:
    files = {**HEREDOC_IN_HELPER, "test/a_test.rb": test}
    files["lib/tool/runner.rb"] = "def run\n  write_rakefile\nend\n" if "runner" in test else ""
    result = walked("test/a_test.rb", files)
    assert ("lib/tool/task.rb" in result.files) is reached
    assert not result.partial


@pytest.mark.parametrize(
    ("method", "in_helper"),
    [
        ("write_rakefile", False),  # the test file's own methods are the tests
        ("setup", True),  # methods the framework calls by itself
        ("test_it", True),
        ("to_s", True),
    ],
)
def test_a_heredoc_in_the_test_file_or_a_hook_always_counts(method: str, in_helper: bool) -> None:
    source = f"def {method}\n  File.write 'R', <<~R\n    require 'tool/task'\n  R\nend\n"
    files: dict[str, Source] = {"test/a_test.rb": source, "lib/tool/task.rb": ""}
    assert "lib/tool/task.rb" in walked("test/a_test.rb", files).files
    files = {"test/a_test.rb": "require_relative 'helper'\n", "test/helper.rb": source}
    files["lib/tool/task.rb"] = ""
    assert ("lib/tool/task.rb" in walked("test/a_test.rb", files).files) is in_helper


@pytest.mark.parametrize(
    ("source", "method"),
    [
        ("  def m\n    x(<<~A)\n      require 'a'\n    A\n  end\n", "m"),
        ("def self.m(a, b = 1)\n  x <<-'A'\n  require 'a'\n  A\nend\n", "m"),
        ("def m\n  if y\n    x <<~A\n      require 'a'\n    A\n  end\nrescue\n  z\nend\n", "m"),
        # Outside a method: runs when the file loads.
        ("class C\n  class_eval <<~RUBY\n    require 'a'\n  RUBY\nend\n", ""),
        # A one-line or endless def holds nothing below it; indentation that does not show
        # the method plainly names none.
        ("def n; end\n  x <<~A\n    require 'a'\n  A\n", ""),
        ("def m = x(<<~A)\n  require 'a'\nA\n", ""),
        ("def m\n  x <<~A\n    require 'a'\n  A\n    end\n", ""),
        ("def m\n  x <<~A\n    require 'a'\n  A\ny\nend\n", ""),
    ],
)
def test_the_method_holding_a_heredoc(source: str, method: str) -> None:
    assert [(load.path, load.when) for load in loads_of(source)] == [("a", method)]


@pytest.mark.parametrize(
    "source",
    [
        "  def m\n    x <<A\n      require 'a'\n    A\n  end\n",  # `<<A` may be a shift
        "  def m\n    x <<~A\n      require 'a'\n  end\n",  # no terminator
        "  def m\n    x = '<<~A'\n      require 'a'\n    A\n  end\n",  # in a string
    ],
)
def test_what_is_not_read_as_a_heredoc_is_read_as_code(source: str) -> None:
    assert loads_of(source) == [Load("require", "a", "a")]


def test_two_heredocs_on_one_line_have_their_bodies_one_after_the_other() -> None:
    source = "  def m\n    x(<<~A, <<~B)\n      require 'a'\n    A\n      require 'b'\n    B\n"
    source += "    require 'c'\n  end\n"
    assert [(load.path, load.when) for load in loads_of(source)] == [
        ("a", "m"),
        ("b", "m"),
        ("c", ""),
    ]


def test_the_names_a_file_calls() -> None:
    source = (
        "def rakefile_test_task\n  x\nend\ndef self.other; end\n"
        "rakefile_imports\nsend(:sym)\nsend('in_string')\nsend(\"rake_#{kind}\")\n"
        'printf("%-#{width}s")\n'
    )
    calls = calls_of(source)
    assert {"rakefile_imports", "sym", "in_string", "x"} <= calls.names
    assert not {"rakefile_test_task", "other"} & calls.names
    assert calls.fragments == {"rake_"}
    assert calls.meets("rake_file") and not calls.meets("make_file")


def test_many_heredocs_are_read_in_one_pass() -> None:
    # 20,000 openers with no terminator, then 20,000 heredocs each in a method: a reader
    # that looked for each one's terminator or method again would take minutes.
    methods = "".join(f"def m{n}\n  x <<~B\n  B\nend\n" for n in range(20_000))
    hostile = "x <<~A\n" * 20_000 + methods
    assert loads_of(hostile + "require 'after'\n") == [Load("require", "after", "after")]


def test_a_file_loaded_through_a_path_built_at_run_time_is_reached_rake() -> None:
    """rake at 474500ab: test_rake_file_task.rb's `load File.join(@rake_lib,
    "rake/phony.rb")`, test_rake_rake_test_loader.rb's `@loader = File.join @rake_lib,
    "rake/rake_test_loader.rb"` then `load @loader` (Kernel#load: not in `$LOADED_FEATURES`,
    but Ruby compiles them for the test)."""
    tree, files = layout("rake")
    for test, loaded in (
        ("test/test_rake_file_task.rb", "lib/rake/phony.rb"),
        ("test/test_rake_rake_test_loader.rb", "lib/rake/rake_test_loader.rb"),
    ):
        result = walked(test, files, tree=tree)
        [found] = [r for r in result.reached if r.path == loaded]
        assert [step.importer for step in found.chain] == [test]
        assert not result.partial


def test_a_feature_name_a_library_method_requires_is_reached_rack() -> None:
    """rack at 8bf4eb07, test/spec_builder.rb (MIT): `Rack::Builder.parse_file` requires a
    path that does not end in `.ru`, found on the load path (test/ is on it)."""
    source = (
        "    it 'requires an_underscore_app not ending in .ru' do\n"
        "      $: << File.dirname(__FILE__)\n"
        "      app, * = Rack::Builder.parse_file 'builder/an_underscore_app'\n"
        "      Rack::MockRequest.new(app).get('/').body.to_s.must_equal 'OK'\n"
        "      $:.pop\n"
        "    end\n"
    )
    files: dict[str, Source] = {
        "test/spec_builder.rb": source,
        "test/builder/an_underscore_app.rb": "",
    }
    assert "test/builder/an_underscore_app.rb" in walked("test/spec_builder.rb", files).files


@pytest.mark.parametrize(
    ("source", "dynamic"),
    [
        ("send(:rakefile_imports)\n", False),
        ('send("rakefile_#{kind}")\n', False),  # its fragment is met, not every condition
        ("def method_missing(name, *args)\n  @body.__send__(name, *args)\nend\n", False),
        ('log "#{prefix}#{head}"\n', False),  # an interpolated string is not a name
        ('send("#{kind}")\n', True),  # the whole name built at run time
        ('public_send "#{verb}_#{noun}", 1\n', True),
        ("Object.const_get(name)\n", True),
        ("Object.const_get @constant_name\n", True),
        ("klass = name.constantize\n", True),
        ("Rails.application.eager_load!\n", True),
        ('x = <<~RUBY\n  send("#{k}")\nRUBY\n', True),
    ],
)
def test_a_name_built_at_run_time_meets_every_condition(source: str, dynamic: bool) -> None:
    """`send("#{kind}")` may call any method, `const_get(name)` name any autoloaded
    constant: the loads waiting for one are followed."""
    assert calls_of(source).dynamic is dynamic
    assert calls_of(source).meets("write_other_file") is dynamic
